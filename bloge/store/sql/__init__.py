"""The SQL backends of the store: statements written once as scripts (``script``, ``reads``,
``writes``, ``rows``, ``schema``) and the drivers that run them (``sqlite``, ``postgres``)."""
