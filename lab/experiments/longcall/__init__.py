"""``make demo-longcall``: a long synchronous Invoke through a NAT that forgets the idle flow (issue 37)."""
