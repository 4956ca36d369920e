"""lab/standin/output_capture.py: per-invocation split of a real child process's stdout/stderr lines."""

import os
import subprocess
import sys
import textwrap

from lab.standin.output_capture import OutputCapture

# The child writes what the parent asks for on stdin, then reports "done" on a third pipe: from
# then on, until the next command, it writes nothing (like a runtime blocked in `next`).
CHILD = textwrap.dedent("""
    import os, sys
    done = int(sys.argv[1])
    for command in sys.stdin:
        kind, _, arg = command.rstrip("\\n").partition(" ")
        if kind == "lines":
            for i in range(int(arg)):
                print("out %d" % i, flush=True)
                print("err %d" % i, file=sys.stderr, flush=True)
        elif kind == "bulk":
            sys.stdout.write(("x" * 99 + "\\n") * int(arg)); sys.stdout.flush()
        elif kind == "partial":
            sys.stderr.write("no newline"); sys.stderr.flush()
        os.write(done, b".")
""")


class Child:
    def __init__(self):
        self.done_r, done_w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, str(done_w)], pass_fds=[done_w],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=False)
        os.close(done_w)
        self.capture = OutputCapture({"stdout": self.proc.stdout, "stderr": self.proc.stderr})

    def command(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        assert os.read(self.done_r, 1) == b"."

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)
        self.capture.close()
        os.close(self.done_r)
        self.proc.stdout.close()
        self.proc.stderr.close()


def test_drain_returns_exactly_what_was_written_since_the_last_drain():
    """Lines written before the child went idle all come out of drain(), none twice, per stream."""
    child = Child()
    try:
        for rounds in (3, 1, 5):
            child.command("lines %d" % rounds)
            lines = child.capture.drain()
            assert [line.text for line in lines if line.stream == "stdout"] == ["out %d" % i for i in range(rounds)]
            assert [line.text for line in lines if line.stream == "stderr"] == ["err %d" % i for i in range(rounds)]
        assert child.capture.drain() == []
    finally:
        child.close()


def test_output_larger_than_the_pipe_buffer_does_not_block_the_child():
    """A child writing 1 MB (16x a pipe buffer) finishes without anyone calling drain()."""
    child = Child()
    try:
        child.command("bulk 10000")  # returns only if the child was never blocked in write()
        assert len([line for line in child.capture.drain() if line.stream == "stdout"]) == 10000
    finally:
        child.close()


def test_last_line_without_newline_is_kept_until_eof():
    """A partial line is not handed out early, and is returned once the stream ends."""
    child = Child()
    try:
        child.command("partial")
        assert child.capture.drain() == []
    finally:
        child.proc.stdin.close()
        child.proc.wait(10)
    lines = child.capture.drain()
    assert [(line.stream, line.text) for line in lines] == [("stderr", "no newline")]
    child.capture.close()
    os.close(child.done_r)
    child.proc.stdout.close()
    child.proc.stderr.close()
