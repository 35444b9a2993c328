"""The grader: cheat-resistant evaluation of kernel.py submissions (DESIGN §5), in two packages, one per process:
`parent` (the server, torch-free, judging) and `child` (the GPU work in a forked child)."""

PROTOCOL_VERSION = 1
