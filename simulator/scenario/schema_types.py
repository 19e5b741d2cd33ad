"""Building blocks of the scenario models: strict frozen models, "one item or a list", shorthand schemas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema


@dataclass(frozen=True, eq=False)  # identity hash: Annotated metadata must be hashable
class Or:
    """JSON Schema of a shorthand the ``BeforeValidator`` next to it accepts (``delta: 0`` for ``{eq: 0}``)."""

    alternative: dict[str, Any] | None = None  # None: the item schema of the array (one item for a list)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        full = handler(schema)
        alternative = self.alternative if self.alternative is not None else full.get("items", {})
        return {"anyOf": [full, alternative]}


def as_list(value: Any) -> Any:
    return value if isinstance(value, list) else [value]


#: a list, or a single item meaning a list of one
StrList = Annotated[list[str], BeforeValidator(as_list), Or()]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
