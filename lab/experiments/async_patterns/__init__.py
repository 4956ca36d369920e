"""make measure-async: how three async (aiobotocore) handler patterns keep connections across
invocations (``run``; ``async_task`` builds the function's task folder). Imports: lab.standin,
lab.services, lab.net."""
