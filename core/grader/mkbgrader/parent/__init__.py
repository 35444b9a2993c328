"""The grader's parent process (DESIGN §5.2, §5.4): the protocol server, settings, the sandbox that forks children,
and every judgement on the children's raw numbers. No module here imports torch, a DSL or `mkbgrader.child`; a
child's work is named by module and function (`child_task.ChildTask`) and imported only in the child."""
