"""Model resolution, the download manifest, and the embedded defaults."""
