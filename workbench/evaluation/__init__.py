"""Quality on public question-answering data sets, through the real ingestion path.

`datasets` reads SQuAD-style and TAT-QA files, `scratch` ingests passages into a
throw-away knowledge base the way users' documents are ingested, and
`search_quality` / `answer_quality` measure retrieval and answers on it.
"""
