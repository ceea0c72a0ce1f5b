"""Claims with a calculation in the chat API: JSON answer, stream and schema."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
import yaml

from answers.calculator import calculate
from answers.types import Claim, Operand
from conversations.api.chat_serializers import ChatClaimSerializer
from tests.retrieval.stub_provider import sources_in

pytestmark = pytest.mark.django_db


class TestClaimShape:
    def test_a_claim_with_a_calculation(self):
        calculation = calculate(
            "percentage_change",
            [
                Operand(Decimal(-2100), "S1", "Operating loss 2018", "(2,100)"),
                Operand(Decimal(-3990), "S1", "Operating loss 2019", "(3,990)"),
            ],
        )
        claim = Claim(
            "Operating loss grew by 90%: ((3,990) − (2,100)) / (2,100) × 100 = 90%",
            ["S1"],
            calculation=calculation,
        )

        assert ChatClaimSerializer(claim).data == {
            "text": claim.text,
            "source_ids": ["S1"],
            "calculation": {
                "operation": "percentage_change",
                "operands": [
                    {
                        "value": "-2100",
                        "source_id": "S1",
                        "label": "Operating loss 2018",
                        "text": "(2,100)",
                    },
                    {
                        "value": "-3990",
                        "source_id": "S1",
                        "label": "Operating loss 2019",
                        "text": "(3,990)",
                    },
                ],
                # Exact, as a string, at its decimals.
                "result": "90.00",
                "decimals": 2,
            },
        }

    def test_decimals_are_exact_strings(self):
        calculation = calculate(
            "sum",
            [
                Operand(Decimal("0.1"), "S1", "", "0.1"),
                Operand(Decimal("1E+3"), "S1", "", "1,000"),
            ],
            decimals=1,
        )
        data = ChatClaimSerializer(
            Claim("1,000.1", ["S1"], calculation=calculation)
        ).data
        assert [o["value"] for o in data["calculation"]["operands"]] == ["0.1", "1000"]
        assert data["calculation"]["result"] == "1000.1"

    def test_a_claim_without_one(self):
        assert ChatClaimSerializer(Claim("A is 1.", ["S1"])).data == {
            "text": "A is 1.",
            "source_ids": ["S1"],
            "calculation": None,
        }


class TestSchema:
    def test_claims_carry_a_nullable_calculation(self, api_client):
        schema = yaml.safe_load(api_client.get("/api/schema").content)

        def component(node):
            if "allOf" in node:
                (node,) = node["allOf"]
            return schema["components"]["schemas"][node["$ref"].split("/")[-1]]

        chat = schema["paths"]["/api/chat"]["post"]["responses"]["200"]
        response = component(chat["content"]["application/json"]["schema"])
        claim = component(response["properties"]["claims"]["items"])
        assert "calculation" in claim["required"]
        field = claim["properties"]["calculation"]
        assert field["nullable"] is True
        calculation = component(field)
        assert set(calculation["required"]) == {
            "operation",
            "operands",
            "result",
            "decimals",
        }
        assert component(calculation["properties"]["operation"])["enum"] == [
            "change",
            "percentage_change",
            "difference",
            "sum",
            "average",
            "ratio",
            "percentage",
            "count",
        ]
        operand = component(calculation["properties"]["operands"]["items"])
        assert set(operand["properties"]) == {"value", "source_id", "label", "text"}
        for decimal in (
            calculation["properties"]["result"],
            operand["properties"]["value"],
        ):
            assert (decimal["type"], decimal["format"]) == ("string", "decimal")


REPORT = b"""# Annual report 2019

## Net revenue

| Year | Net revenue |
|---|---|
| 2018 | 1,100 |
| 2019 | 1,250 |
"""
QUESTION = "What was the change in net revenue from 2018 to 2019?"
TEXT = "Change in net revenue from 2018 to 2019: 1,250 − 1,100 = 150"


def ask(client, question=QUESTION):
    return client.post("/api/chat", {"question": question}, format="json")


def holding(body: dict, number: str) -> str:
    """The id of the first source in the model's prompt that writes `number`."""
    return next(i for i, text in sources_in(body).items() if number in text)


def model_says(
    *, text=TEXT, result="150", decimals=0, operation="change", later="1,250"
):
    """A stub reply: one claim with the calculation the model proposes."""

    def reply(body: dict) -> str:
        source_id = holding(body, "1,250")
        calculation = {
            "operation": operation,
            "operands": [
                {"value": "1,100", "source_id": source_id, "label": "Net revenue 2018"},
                {"value": later, "source_id": source_id, "label": "Net revenue 2019"},
            ],
            "result": result,
            "decimals": decimals,
        }
        claim = {"text": text, "source_ids": [source_id], "calculation": calculation}
        return json.dumps({"claims": [claim]}, ensure_ascii=False)

    return reply


class TestOpenAICompatible:
    def test_a_calculation_that_holds_is_answered(
        self, ingest, use_stub, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, REPORT, filename="report.md")
        stub = use_stub(chat=True)
        stub.chat_reply = model_says()

        response = ask(client_for(viewer))

        assert response.status_code == 200
        body = response.json()
        assert body["refused"] is False
        assert body["claims"] == [
            {
                "text": TEXT,
                "source_ids": ["S1"],
                "calculation": {
                    "operation": "change",
                    "operands": [
                        {
                            "value": "1100",
                            "source_id": "S1",
                            "label": "Net revenue 2018",
                            "text": "1,100",
                        },
                        {
                            "value": "1250",
                            "source_id": "S1",
                            "label": "Net revenue 2019",
                            "text": "1,250",
                        },
                    ],
                    "result": "150",
                    "decimals": 0,
                },
            }
        ]
        assert body["answer"] == f"{TEXT}[S1]"
        assert [source["filename"] for source in body["sources"]] == ["report.md"]
        # The model was told how to propose one.
        assert '"calculation"' in stub.requests[-1][1]["messages"][0]["content"]

    def test_a_percentage_change(
        self, ingest, use_stub, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, REPORT)
        stub = use_stub(chat=True)
        stub.chat_reply = model_says(
            operation="percentage change",
            text="Net revenue grew by 13.64% from 2018 to 2019.",
            result="13.64%",
            decimals=2,
        )

        body = ask(client_for(viewer)).json()

        assert [claim["text"] for claim in body["claims"]] == [
            "Net revenue grew by 13.64% from 2018 to 2019."
        ]
        calculation = body["claims"][0]["calculation"]
        assert calculation["operation"] == "percentage_change"
        assert calculation["result"] == "13.64"

    @pytest.mark.parametrize(
        "proposal",
        [
            # A wrong result, said in the words too.
            {"text": TEXT.replace("150", "160"), "result": "160"},
            # A wrong result behind right words: recomputed, not fixed.
            {"result": "160"},
            # An operand its source does not hold.
            {
                "later": "1,260",
                "text": TEXT.replace("1,250", "1,260").replace("150", "160"),
                "result": "160",
            },
            # The right figure at the wrong rounding.
            {
                "operation": "percentage_change",
                "text": "Net revenue grew by 13.64%.",
                "result": "13.64",
            },
            # An unknown operation: no calculation, and 150 is in no source.
            {"operation": "median"},
        ],
    )
    def test_a_calculation_that_fails_is_refused(
        self, ingest, use_stub, viewer, client_for, knowledge_base, proposal
    ):
        ingest(knowledge_base, REPORT)
        stub = use_stub(chat=True)
        stub.chat_reply = model_says(**proposal)

        body = ask(client_for(viewer)).json()

        assert body["refused"] is True
        assert body["refusal_reason"] == "unsupported_claim"
        assert body["claims"] == []
        for number in ("150", "160", "13.64"):
            assert number not in body["answer"]

    def test_the_stream_carries_the_calculation(
        self, ingest, use_stub, viewer, client_for, knowledge_base
    ):
        ingest(knowledge_base, REPORT)
        stub = use_stub(chat=True)
        stub.chat_reply = model_says()
        client = client_for(viewer)

        response = client.post(
            "/api/chat/stream",
            {"question": QUESTION},
            format="json",
            HTTP_ACCEPT="text/event-stream",
        )

        raw = b"".join(response.streaming_content).decode()
        completed = json.loads(raw.split("event: run.completed\ndata: ")[1])
        assert completed["claims"][0]["calculation"]["result"] == "150"
        answered = ask(client).json()
        # Each ask starts a conversation of its own; the answers are the same.
        assert completed.pop("conversation_id") != answered.pop("conversation_id")
        assert completed == answered
