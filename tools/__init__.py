"""The project's instruments, by role: each folder below is one room, its lock files beside the code
that installs them. A room imports its own modules and the rooms listed before it, never back up.

    interpreters/  CPython for every supported minor: find one (find-python), else install it
                   (install-python: uv, else Maven Central's pinned builds, cpython-maven.sha256);
                   the uv bootstrap lock (uv.txt).
    packaging/     the layer zips (full and hook flavor) and the wheel, byte for byte reproducible:
                   build_layer, build_wheel, the CA directories (ca_dir), the prepared SDK data
                   (prepare_data), the deterministic zip writer (repro_zip), the layer's metadata
                   (layer_info).
    release/       build/release/ and getting it to users: release (the zips with the pinned
                   interpreters), sbom, signing, publish (every region), regions, smoke, the ARN
                   table (layers_table), publish_wheel; locks for moto, pypiserver, twine, the SBOM
                   validator.
    deploy/        the user's own account: SAM, CDK and Serverless snippets' tools, and verify_aws
                   (the demo's experiment on AWS) with its stack (verify-aws/).
    docs/          render_docs: README's and docs/'s numbers from the benchmarks' JSON.
    lint/          ruff's lock.

Scripts run as files (`python tools/release/release.py`) put the repository root on sys.path
and import rooms as packages (`from tools.packaging import layer_info`).
"""
