"""make soak: the fault soak (``run``), its seeded fault schedule (``chaos``), figures (``report``) and
plot (``plot``); ``task/`` holds the soak functions' handlers. Imports: lab.standin, lab.services,
lab.net, lab.experiments.progress and async_patterns' task folder (the aiobotocore variant)."""
