"""The grader's child process (DESIGN §5.2): loading the problem and the candidate, drawing inputs, running and
timing them on the device, and sending raw numbers to the parent. Its modules import torch at the top; they run
only in a forked child (or in the server before it forks, to preload them)."""
