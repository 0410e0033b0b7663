package main

// Each type of contract.go says what its JSON Schema says: the same fields, the same required
// ones (required = no omitempty), compatible JSON types. A tagged union (an anyOf of objects) is
// one struct: every member's fields, required where every member requires them. BROWSERAI_SCHEMAS_DIR points at the
// schemas; default: the repository's schemas/.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// Where each type's schema is: schema file and JSON pointer inside it.
var schemaOf = map[reflect.Type][2]string{
	reflect.TypeOf(BrowserTaskInput{}):        {"browser-task-input.schema.json", "/$defs/BrowserTaskInput"},
	reflect.TypeOf(Instruction{}):             {"browser-task-input.schema.json", "/$defs/Instruction"},
	reflect.TypeOf(GeoLocation{}):             {"browser-task-input.schema.json", "/$defs/GeoLocation"},
	reflect.TypeOf(PollingOptions{}):          {"browser-task-input.schema.json", "/$defs/PollingOptions"},
	reflect.TypeOf(TaskActivityOptions{}):     {"browser-task-input.schema.json", "/$defs/TaskActivityOptions"},
	reflect.TypeOf(RetryPacing{}):             {"browser-task-input.schema.json", "/$defs/TaskActivityOptions/properties/retry"},
	reflect.TypeOf(TaskWebhookOptions{}):      {"browser-task-input.schema.json", "/$defs/TaskWebhookOptions"},
	reflect.TypeOf(CodeRecipient{}):           {"browser-task-input.schema.json", "/$defs/CodeRecipient"},
	reflect.TypeOf(CodeMessage{}):             {"code-message.schema.json", "/$defs/CodeMessage"},
	reflect.TypeOf(NextInputRequestMessage{}): {"next-input-request-message.schema.json", "/$defs/NextInputRequestMessage"},
	reflect.TypeOf(InputRequest{}):            {"input-request.schema.json", "/$defs/InputRequest"},
	reflect.TypeOf(TaskFinished{}):            {"task-finished.schema.json", "/$defs/TaskFinished"},
	reflect.TypeOf(InputRequestWait{}):        {"input-request-wait.schema.json", "/$defs/InputRequestWait"},
	reflect.TypeOf(BrowserTaskResult{}):       {"browser-task-result.schema.json", "/$defs/BrowserTaskResult"},
	reflect.TypeOf(TrimReport{}):              {"browser-task-result.schema.json", "/$defs/TrimReport"},
	reflect.TypeOf(BrowserTaskState{}):        {"browser-task-state.schema.json", "/$defs/BrowserTaskState"},
	reflect.TypeOf(TaskProgress{}):            {"browser-task-state.schema.json", "/$defs/BrowserTaskState/properties/progress"},
	reflect.TypeOf(InboxView{}):               {"browser-task-state.schema.json", "/$defs/InboxView"},
	reflect.TypeOf(InboxEvent{}):              {"browser-task-state.schema.json", "/$defs/InboxEvent"},
	reflect.TypeOf(InvalidInputDetails{}):     {"workflow-failure.schema.json", "/$defs/InvalidInputDetails"},
}

type node = map[string]any

func schemasDir() string {
	if dir := os.Getenv("BROWSERAI_SCHEMAS_DIR"); dir != "" {
		return dir
	}
	return filepath.Join("..", "..", "schemas")
}

func at(root node, pointer string) node {
	current := root
	for _, part := range strings.Split(strings.Trim(strings.TrimPrefix(pointer, "#"), "/"), "/") {
		current = current[part].(node)
	}
	return current
}

func resolve(n, root node) node {
	for n["$ref"] != nil {
		n = at(root, n["$ref"].(string))
	}
	return n
}

func jsonType(value any) string {
	switch value.(type) {
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case nil:
		return "null"
	}
	return "object"
}

// The JSON types a schema allows; nil: any.
func schemaTypes(n, root node) map[string]bool {
	n = resolve(n, root)
	out := map[string]bool{}
	switch {
	case n["anyOf"] != nil:
		for _, member := range n["anyOf"].([]any) {
			types := schemaTypes(member.(node), root)
			if types == nil {
				return nil
			}
			for t := range types {
				out[t] = true
			}
		}
	case n["const"] != nil:
		out[jsonType(n["const"])] = true
	case n["enum"] != nil:
		for _, value := range n["enum"].([]any) {
			out[jsonType(value)] = true
		}
	case n["type"] != nil:
		if list, ok := n["type"].([]any); ok {
			for _, t := range list {
				out[t.(string)] = true
			}
		} else {
			out[n["type"].(string)] = true
		}
	default:
		return nil
	}
	return out
}

// The JSON types a Go field allows; nil: any. A pointer without omitempty may be null.
func goTypes(t reflect.Type, optional bool) map[string]bool {
	switch t.Kind() {
	case reflect.Pointer:
		types := goTypes(t.Elem(), optional)
		if !optional {
			types["null"] = true
		}
		return types
	case reflect.Interface:
		return nil
	case reflect.String:
		return map[string]bool{"string": true}
	case reflect.Bool:
		return map[string]bool{"boolean": true}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]bool{"integer": true}
	case reflect.Float32, reflect.Float64:
		return map[string]bool{"number": true}
	case reflect.Slice:
		return map[string]bool{"array": true}
	}
	return map[string]bool{"object": true}
}

// A Go integer fits a JSON number; a float does not fit an integer; `any` stands for a union.
func compatible(goT, schemaT map[string]bool) bool {
	if goT == nil {
		return schemaT == nil || len(schemaT) > 1
	}
	if schemaT == nil {
		return false
	}
	normalized := map[string]bool{}
	for t := range goT {
		if t == "integer" && !schemaT["integer"] {
			t = "number"
		}
		normalized[t] = true
	}
	return reflect.DeepEqual(normalized, schemaT)
}

func sorted(set map[string]bool) []string {
	out := []string{}
	for key := range set {
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

// The properties of an object schema and the names it requires; of a union of objects, every
// member's properties (the first member's schema for a name they share) and the names all require.
func fieldsOf(schema, root node) (node, map[string]bool) {
	members := []node{schema}
	if union, ok := schema["anyOf"].([]any); ok {
		members = nil
		for _, member := range union {
			members = append(members, resolve(member.(node), root))
		}
	}
	properties, required := node{}, map[string]bool{}
	for i, member := range members {
		own, _ := member["properties"].(node)
		for name, property := range own {
			if properties[name] == nil {
				properties[name] = property
			}
		}
		requires := map[string]bool{}
		names, _ := member["required"].([]any)
		for _, name := range names {
			requires[name.(string)] = true
		}
		for name := range required {
			if !requires[name] {
				delete(required, name)
			}
		}
		if i == 0 {
			required = requires
		}
	}
	return properties, required
}

func TestEachTypeMatchesItsSchema(t *testing.T) {
	for goType, where := range schemaOf {
		text, err := os.ReadFile(filepath.Join(schemasDir(), where[0]))
		if err != nil {
			t.Fatal(err)
		}
		var root node
		if err := json.Unmarshal(text, &root); err != nil {
			t.Fatal(err)
		}
		properties, required := fieldsOf(resolve(at(root, where[1]), root), root)
		fields, goRequired := map[string]bool{}, map[string]bool{}
		for i := 0; i < goType.NumField(); i++ {
			field := goType.Field(i)
			tag := strings.Split(field.Tag.Get("json"), ",")
			fields[tag[0]] = true
			isOptional := len(tag) > 1 && tag[1] == "omitempty"
			if !isOptional {
				goRequired[tag[0]] = true
			}
			if property, ok := properties[tag[0]].(node); ok {
				want, got := schemaTypes(property, root), goTypes(field.Type, isOptional)
				if !compatible(got, want) {
					t.Errorf("%s.%s: %v in Go, %v in %s", goType.Name(), field.Name, sorted(got), sorted(want), where[0])
				}
			}
		}
		schemaFields := map[string]bool{}
		for name := range properties {
			schemaFields[name] = true
		}
		if !reflect.DeepEqual(fields, schemaFields) {
			t.Errorf("%s: fields %v, but %s has %v", goType.Name(), sorted(fields), where[0], sorted(schemaFields))
		}
		if !reflect.DeepEqual(goRequired, required) {
			t.Errorf("%s: required %v, but %s requires %v", goType.Name(), sorted(goRequired), where[0], sorted(required))
		}
	}
}
