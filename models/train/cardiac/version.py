"""Model versions. Every version says the models were trained on synthetic data."""
CARDIAC_VERSION = "v3.4.0-synthetic-xraysim.1"
