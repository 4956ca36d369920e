"""Release: build/release/ from the pinned interpreters (release, sbom), and publishing it: the layer
into every region (publish, regions, signing, smoke, layers_table) and the wheel to an index
(publish_wheel). Locks beside them: moto (the local AWS stand-in), pypiserver, twine, the SBOM
validator. Imports build and interpreters."""
