"""Each type of browserai_contract.py says what its JSON Schema says: the same fields, the same
required ones, compatible JSON types. Run: python -m unittest (BROWSERAI_SCHEMAS_DIR points at
the schemas; default: the repository's schemas/)."""

import json
import os
import types
import typing
import unittest
from pathlib import Path

from browserai_contract import SCHEMA_OF, UNION_OF

SCHEMAS_DIR = Path(os.environ.get("BROWSERAI_SCHEMAS_DIR", Path(__file__).parent / ".." / ".." / "schemas"))


def schema_at(file: str, pointer: str) -> tuple[dict, dict]:
    root = json.loads((SCHEMAS_DIR / file).read_text())
    node = root
    for part in pointer.strip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return root, node


def resolve(node: dict, root: dict) -> dict:
    while "$ref" in node:
        node = schema_at_ref(root, node["$ref"])
    return node


def schema_at_ref(root: dict, ref: str) -> dict:
    node = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def json_of(value) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}[type(value)]


def schema_types(node: dict, root: dict) -> set[str] | None:
    """The JSON types a schema allows (None: any)."""
    node = resolve(node, root)
    if "anyOf" in node:
        found = [schema_types(member, root) for member in node["anyOf"]]
        return None if None in found else set().union(*found)
    if "const" in node:
        return {json_of(node["const"])}
    if "enum" in node:
        return {json_of(value) for value in node["enum"]}
    if "type" in node:
        return set(node["type"]) if isinstance(node["type"], list) else {node["type"]}
    return None


def python_types(annotation) -> set[str] | None:
    """The JSON types a Python annotation allows (None: any)."""
    origin = typing.get_origin(annotation)
    if annotation is typing.Any:
        return None
    if origin in (typing.Union, types.UnionType):
        found = [python_types(arg) for arg in typing.get_args(annotation)]
        return None if None in found else set().union(*found)
    if origin is typing.Literal:
        return {json_of(value) for value in typing.get_args(annotation)}
    if origin is list:
        return {"array"}
    if origin is dict or typing.is_typeddict(annotation):
        return {"object"}
    return {json_of(annotation())} if annotation in (bool, int, float, str) else {"null"}


def compatible(python: set[str] | None, schema: set[str] | None) -> bool:
    if schema is None or python is None:
        return schema == python
    # A Python int fits a JSON number; a float does not fit an integer.
    return {"number" if t == "integer" and "integer" not in schema else t for t in python} == schema


class ContractTypes(unittest.TestCase):
    def test_each_type_matches_its_schema(self):
        for cls, (file, pointer) in SCHEMA_OF.items():
            with self.subTest(type=cls.__name__):
                root, node = schema_at(file, pointer)
                node = resolve(node, root)
                properties = node.get("properties", {})
                hints = typing.get_type_hints(cls)
                self.assertEqual(set(hints), set(properties), f"{cls.__name__}: fields differ from {file}")
                self.assertEqual(
                    set(cls.__required_keys__),
                    set(node.get("required", [])),
                    f"{cls.__name__}: required fields differ from {file}",
                )
                for name, annotation in hints.items():
                    want, got = schema_types(properties[name], root), python_types(annotation)
                    self.assertTrue(compatible(got, want), f"{cls.__name__}.{name}: {got} in Python, {want} in {file}")

    def test_each_union_has_one_type_per_schema_member(self):
        for union, (file, pointer) in UNION_OF.items():
            root, node = schema_at(file, pointer)
            members = typing.get_args(union)
            self.assertEqual(len(members), len(resolve(node, root)["anyOf"]), f"{pointer}: members differ")
            for i, member in enumerate(members):
                self.assertEqual(SCHEMA_OF.get(member), (file, f"{pointer}/anyOf/{i}"), member.__name__)


if __name__ == "__main__":
    unittest.main()
