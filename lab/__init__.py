"""cipherlab: build, verify and measure block-cipher implementations, NIST-1999 style."""

__all__ = ["__version__"]
__version__ = "0.1.0"
