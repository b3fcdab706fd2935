"""Model versions. Every version says the models were trained on synthetic data."""
CARDIAC_VERSION = "v3.0.0-synthetic-phantom.5"
