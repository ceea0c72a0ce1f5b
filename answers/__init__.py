"""Answers over published knowledge: retrieve, draft claims, check every claim, cite.

`chat.chat_answer()` is the entry point; `types` holds what the modules share,
`checker` and `calculator` decide which claims stand, `providers` names who drafts.
"""
