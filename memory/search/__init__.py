"""Lexical search (R33–R36): the text pipeline, the index worker and the query."""
