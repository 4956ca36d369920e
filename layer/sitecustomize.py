"""Fallback entry point of the aws-keepalive layer, then hand-over to any other sitecustomize.

On the managed Python runtimes ``aws_keepalive.pth`` is what activates the layer.  But when the
interpreter starts with PYTHONPATH already set (exec wrappers do this), the runtime skips adding
/opt/python as a site directory and no ``.pth`` there runs; ``site`` imports the first
``sitecustomize`` on sys.path instead, which is this file when /opt/python comes first.  The
logic (and why usercustomize.py exists too) is in ``_aws_keepalive_site``.
"""

import _aws_keepalive_site

_aws_keepalive_site.activate("sitecustomize")
_aws_keepalive_site.chain("sitecustomize", __file__)
