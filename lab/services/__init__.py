"""Stand-ins for AWS services the lab's functions talk to."""
