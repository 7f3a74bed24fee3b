package yamlout

import (
	"bytes"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestFromJSON: keys keep their order, collections are in block style
// (empty ones as [] and {}), and strings that look like numbers, booleans
// or null stay strings when read back.
func TestFromJSON(t *testing.T) {
	doc := `{"z":1,"a":{"b":[1,2],"c":[],"d":{}},"s":"007","t":"true","n":null,"e":"x: y # z","u":"héllo"}`
	var out bytes.Buffer
	if err := FromJSON(&out, []byte(doc)); err != nil {
		t.Fatal(err)
	}
	want := "z: 1\na:\n  b:\n    - 1\n    - 2\n  c: []\n  d: {}\ns: \"007\"\nt: \"true\"\nn: null\ne: 'x: y # z'\nu: héllo\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	var back map[string]any
	if err := yaml.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back["s"] != "007" || back["t"] != "true" || back["n"] != nil || back["e"] != "x: y # z" {
		t.Fatalf("read back %v", back)
	}
}
