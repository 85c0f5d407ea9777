"""The tool layer: the ``@tool`` spec, errors, fault injection, the call path and the catalog."""
