package report

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
)

// jsonNames are the JSON names of a struct type's fields, in order.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "-" && name != "" {
			out = append(out, name)
		}
	}
	return out
}

// TestDocumentHasEveryField: the JSON document lists every field of the
// analysis, in the analysis' order, and the five that later stages add.
func TestDocumentHasEveryField(t *testing.T) {
	doc := jsonNames(reflect.TypeOf(document{}))
	var fromAnalysis []string
	for _, name := range doc {
		if !slices.Contains([]string{"rule_matches", "delta", "gates", "migration", "fragmentation"}, name) {
			fromAnalysis = append(fromAnalysis, name)
		}
	}
	if want := jsonNames(reflect.TypeOf(analyze.Report{})); !slices.Equal(fromAnalysis, want) {
		t.Errorf("the document's analysis fields\n%v\nare not analyze.Report's\n%v", fromAnalysis, want)
	}
	if got := len(doc) - len(fromAnalysis); got != 5 {
		t.Errorf("%d fields of later stages, want 5", got)
	}
}
