"""lnetgen: plan and deploy Lustre LNet fine-grained routing from a site inventory."""

__version__ = "0.1.0"
