"""The grader: cheat-resistant evaluation of kernel.py submissions (DESIGN §5)."""

PROTOCOL_VERSION = 1
