"""Build: the layer zips (build_layer: full and hook flavor), the wheel (build_wheel), the hashed CA
directories (ca_dir), the prepared SDK data (prepare_data), the deterministic zip writer
(repro_zip), the layer's metadata (layer_info) and the table of SDK defaults the full layer
changes (sdk_defaults). Standard library only; imports no other room."""
