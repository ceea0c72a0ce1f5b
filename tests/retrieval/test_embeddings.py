"""Hashing embedder: deterministic, normalised, lexically sensible."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval.embeddings import (
    Embedder,
    HashingEmbedder,
    cosine,
    from_bytes,
    get_embedder,
    to_bytes,
)

REPO = Path(__file__).resolve().parents[2]

LEAVE = "Every employee receives twenty five days of annual leave per calendar year."
LEAVE_PARAPHRASE = "Employees get twenty five annual leave days each year."
UNRELATED = "The office printer on the third floor needs a new toner cartridge."
LEAVE_ZH = "每位员工每年享有二十五天年假。"
LEAVE_ZH_PARAPHRASE = "员工年假为二十五天。"
UNRELATED_ZH = "三楼的打印机需要更换墨盒。"


def test_shape_dtype_and_normalisation() -> None:
    embedder = HashingEmbedder()
    vectors = embedder.embed([LEAVE, LEAVE_ZH, "", "   "])
    assert vectors.shape == (4, 512)
    assert vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert norms[:2] == pytest.approx([1.0, 1.0], abs=1e-5)
    assert not vectors[2:].any()  # empty text: zero vector


def test_empty_batch() -> None:
    assert HashingEmbedder().embed([]).shape == (0, 512)


def test_configurable_dimension() -> None:
    embedder = HashingEmbedder(dimension=64)
    assert embedder.embed([LEAVE]).shape == (1, 64)
    assert embedder.name != HashingEmbedder().name


def test_deterministic_across_instances() -> None:
    first = HashingEmbedder().embed([LEAVE, LEAVE_ZH])
    second = HashingEmbedder().embed([LEAVE, LEAVE_ZH])
    assert np.array_equal(first, second)


def test_deterministic_across_processes() -> None:
    script = (
        "import sys, hashlib; sys.path.insert(0, sys.argv[1]);"
        "from retrieval.embeddings import HashingEmbedder;"
        "v = HashingEmbedder().embed([sys.argv[2]]);"
        "print(hashlib.sha256(v.tobytes()).hexdigest())"
    )
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", script, str(REPO), LEAVE],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        digests.add(result.stdout.strip())
    local = HashingEmbedder().embed([LEAVE])
    digests.add(hashlib.sha256(local.tobytes()).hexdigest())
    assert len(digests) == 1


@pytest.mark.parametrize(
    ("text", "paraphrase", "unrelated"),
    [
        (LEAVE, LEAVE_PARAPHRASE, UNRELATED),
        (LEAVE_ZH, LEAVE_ZH_PARAPHRASE, UNRELATED_ZH),
    ],
    ids=["english", "chinese"],
)
def test_paraphrase_is_closer_than_unrelated_text(
    text: str, paraphrase: str, unrelated: str
) -> None:
    query, close, far = HashingEmbedder().embed([text, paraphrase, unrelated])
    assert cosine(query, close) > cosine(query, far) + 0.2


def test_repeated_words_weigh_sublinearly() -> None:
    embedder = HashingEmbedder()
    once, many, other = embedder.embed(["leave policy", "leave " * 50 + "policy", "x"])
    # 50 repetitions do not drown the other word.
    assert cosine(once, many) > 0.5
    assert cosine(once, other) == pytest.approx(0.0, abs=1e-6)


def test_get_embedder_is_a_process_wide_default() -> None:
    from django.conf import settings

    embedder: Embedder = get_embedder()
    assert embedder is get_embedder()
    assert isinstance(embedder, HashingEmbedder)
    assert settings.EMBEDDING_DIMENSION == 256  # 1 KiB per chunk in a snapshot
    assert embedder.dimension == settings.EMBEDDING_DIMENSION
    assert embedder.name == "hashing-v2-256"


def test_bytes_round_trip() -> None:
    vector = HashingEmbedder().embed([LEAVE])[0]
    data = to_bytes(vector)
    assert len(data) == 512 * 4
    restored = from_bytes(data, 512)
    assert restored.dtype == np.float32
    assert np.array_equal(restored, vector)
    restored[0] = 1.0  # writable copy, not a view on the bytes


def test_from_bytes_rejects_wrong_length() -> None:
    with pytest.raises(ValueError, match="expected 2048 bytes"):
        from_bytes(b"\x00" * 100, 512)


def test_a_batch_gives_the_rows_of_its_texts_embedded_one_by_one() -> None:
    # The batch is hashed in one pass; no row may borrow another's features.
    text = (LEAVE + " " + LEAVE_ZH) * 4
    texts = [f"{i} {text[: 500 - len(str(i))]}" for i in range(200)]
    texts[7] = ""
    embedder = HashingEmbedder()
    batch = embedder.embed(texts)
    one_by_one = np.vstack([HashingEmbedder().embed([t]) for t in texts])
    assert np.array_equal(batch, one_by_one)
    assert not batch[7].any()


def test_vectors_follow_the_feature_scheme_exactly_even_where_features_collide():
    # The scheme, written plainly: words and the pair each word ends, CJK n-grams;
    # signed slots from BLAKE2b; 1 + log(tf), summed in feature order; rows then
    # L2-normalised.
    # At 16 dimensions many features share a slot, so the summation order shows.
    from collections import Counter

    from retrieval.tokens import cjk_ngrams, iter_terms

    def reference(text: str, dimension: int) -> np.ndarray:
        features, previous = [], None
        for is_cjk, term in iter_terms(text):
            if is_cjk:
                features.extend(cjk_ngrams(term))
                previous = None
            else:
                features.append(term)
                if previous is not None:
                    features.append(f"{previous} {term}")
                previous = term
        row = np.zeros(dimension, dtype=np.float64)
        for feature, count in Counter(features).items():
            value = int.from_bytes(
                hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little"
            )
            sign = -1.0 if value >> 63 else 1.0
            row[value % dimension] += sign * (1.0 + np.log(count))
        return row.astype(np.float32)

    rng = random.Random(6)
    words = ["".join(rng.choices("abcd", k=rng.randint(1, 3))) for _ in range(40)]
    words += ["年假", "员工 年假", "3.5", "1,000", "don't"]
    texts = [
        " ".join(rng.choice(words) for _ in range(rng.randint(0, 60)))
        for _ in range(3000)
    ]
    vectors = HashingEmbedder(16).embed(texts)
    expected = np.vstack([reference(text, 16) for text in texts])
    norms = np.linalg.norm(expected, axis=1, keepdims=True)
    np.divide(expected, norms, out=expected, where=norms > 0)
    assert np.array_equal(vectors, expected)


def test_pickled_without_its_feature_cache() -> None:
    import pickle

    embedder = HashingEmbedder(dimension=64)
    texts = ["annual leave policy " * 50, "出差补助每天一百元"]
    vectors = embedder.embed(texts)

    copy = pickle.loads(pickle.dumps(embedder))  # noqa: S301 - our own bytes

    assert len(pickle.dumps(embedder)) < 200
    assert (copy.name, copy.dimension, copy.portable) == (embedder.name, 64, True)
    assert np.array_equal(copy.embed(texts), vectors)
