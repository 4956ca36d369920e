"""Entry point when the interpreter starts with /opt/python on PYTHONPATH (exec wrappers); hands
over to any other usercustomize.

``site`` imports ``usercustomize`` after ``sitecustomize`` whenever the user site is enabled (as
on the managed runtime), searching the whole sys.path, so this file runs behind wrappers whose
sitecustomize comes first and chains to nothing.  See ``_aws_keepalive_site``.
"""

import _aws_keepalive_site

_aws_keepalive_site.activate("usercustomize")
_aws_keepalive_site.chain("usercustomize", __file__)
