package policy

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ruleKeys and suggestKeys are the keys a rule may have.
var (
	ruleKeys    = []string{"name", "priority", "on", "when", "for", "severity", "suggest", "enabled"}
	suggestKeys = []string{"text", "command"}
)

// Load reads the rules: list of a YAML document (a --rules file, or the
// config file when only is false, whose other keys are the config's). A
// key a rule cannot have, or a value of the wrong type, is an error that
// names the file and line. Each rule keeps its line for Compile's errors.
func Load(data []byte, path string, only bool) ([]Rule, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(joinLines(err.Error()), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the top level must be a mapping with a rules: list", path, root.Line)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		switch {
		case k.Value == "rules":
			list = root.Content[i+1]
		case only:
			return nil, fmt.Errorf("%s:%d: unknown key %q (a rules file has one key, rules:)", path, k.Line, k.Value)
		}
	}
	if list == nil {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: rules must be a list", path, list.Line)
	}
	var out []Rule
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: a rule must be a mapping (name:, when:, …)", path, item.Line)
		}
		if err := checkKeys(item, ruleKeys, path); err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == "suggest" {
				if err := checkKeys(item.Content[i+1], suggestKeys, path); err != nil {
					return nil, err
				}
			}
		}
		var r Rule
		if err := item.Decode(&r); err != nil {
			msg := strings.TrimPrefix(strings.TrimPrefix(joinLines(err.Error()), "yaml: "), "unmarshal errors: | ")
			return nil, fmt.Errorf("%s:%d: %s", path, item.Line, msg)
		}
		r.line, r.file = item.Line, path
		out = append(out, r)
	}
	return out, nil
}

func checkKeys(n *yaml.Node, known []string, path string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: must be a mapping", path, n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(known, k.Value) {
			return fmt.Errorf("%s:%d: unknown key %q (a rule has %s)", path, k.Line, k.Value, strings.Join(known, ", "))
		}
	}
	return nil
}
