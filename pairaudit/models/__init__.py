"""Model loading (tokenizers, embedder, reference/reward/policy models). Heavy imports are lazy."""
