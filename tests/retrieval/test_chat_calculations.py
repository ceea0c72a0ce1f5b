"""Claims with a calculation in the chat API: JSON answer, stream and schema."""

from __future__ import annotations

from decimal import Decimal

import pytest
import yaml

from retrieval.answers.calculator import calculate
from retrieval.answers.types import Claim, Operand
from retrieval.api.chat_serializers import ChatClaimSerializer

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
