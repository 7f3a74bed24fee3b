// Package pricing prices GPU-hours: the user's prices over seedance's
// defaults, matched to a GPU model by the longest substring. analyze and
// recommend both price through it (docs/pricing.md).
package pricing

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// DefaultPrices are per-GPU-hour prices in USD for common models, used when
// the user gives none for a model. docs/pricing.md gives each one's source
// and date; users should set their own (--gpu-price, pricing.gpu_hour_usd).
var DefaultPrices = map[string]float64{
	"H200":           5.408,
	"H100":           4.916,
	"B200":           14.24,
	"A100":           1.844,
	"A100-SXM4-80GB": 2.305,
	"A100 80GB":      2.305,
	"A100-PCIE-80GB": 2.305,
	"L40S":           1.861,
	"L4":             0.805,
	"A10G":           1.006,
	"T4":             0.526,
	"V100":           3.06,
}

// Pricer finds the price of a GPU model. Among the user's entries, the one
// whose key is the longest case-insensitive substring of the model name wins
// (so "L40S" beats "L4" for an L40S); when no user entry matches, the same
// rule picks among DefaultPrices; when none matches either, the fallback
// price applies. A user's "A100" thus prices every A100, even where a
// longer default key ("A100-SXM4-80GB") also matches.
type Pricer struct {
	user     map[string]float64
	fallback float64

	used      map[string]bool // default-table keys used
	userUsed  map[string]bool // the user's keys that priced a model
	unmatched map[string]bool // models priced at the fallback
	rules     []Rule          // a price file's, first match wins (PriceOn)
	memo      map[string]priced
	// preferDiscovered: a node's billed cost wins over a given price;
	// disagreements are the nodes whose two prices differ (PriceOn).
	preferDiscovered bool
	disagreements    map[disagreement]map[string]bool
}

// New returns a Pricer over the user's prices and DefaultPrices.
func New(user map[string]float64, fallback float64) *Pricer {
	return &Pricer{user: user, fallback: fallback, used: map[string]bool{}, userUsed: map[string]bool{}, unmatched: map[string]bool{}}
}

// longestMatch returns the key of table that is the longest case-insensitive
// substring of model (ties broken by key order, for determinism).
func longestMatch(model string, table map[string]float64) (string, bool) {
	m := strings.ToLower(model)
	best, found := "", false
	for k := range table {
		lk := strings.ToLower(k)
		if lk == "" || !strings.Contains(m, lk) {
			continue
		}
		if !found || len(k) > len(best) || (len(k) == len(best) && k < best) {
			best, found = k, true
		}
	}
	return best, found
}

// Price returns the USD per hour of one GPU of the model.
func (p *Pricer) Price(model string) float64 {
	return p.match(model).usd
}

// priced is a model's price and where it came from.
type priced struct {
	usd    float64
	source string
}

// match prices a model, once per model: a fleet has a few models and
// thousands of nodes, and a match scans every key of both tables.
func (p *Pricer) match(model string) priced {
	if m, ok := p.memo[model]; ok {
		return m
	}
	var m priced
	if k, ok := longestMatch(model, p.user); ok {
		p.userUsed[k] = true
		m = priced{p.user[k], SourceUser}
	} else if k, ok := longestMatch(model, DefaultPrices); ok {
		p.used[k] = true
		m = priced{DefaultPrices[k], SourceTable}
	} else {
		p.unmatched[model] = true
		m = priced{p.fallback, SourceFallback}
	}
	if p.memo == nil {
		p.memo = map[string]priced{}
	}
	p.memo[model] = m
	return m
}

// Table returns every price in effect: the defaults overridden by the user's.
func (p *Pricer) Table() map[string]float64 {
	out := map[string]float64{}
	for k, v := range DefaultPrices {
		out[k] = v
	}
	for k, v := range p.user {
		for dk := range out {
			if strings.EqualFold(dk, k) {
				delete(out, dk)
			}
		}
		out[k] = v
	}
	return out
}

// DefaultsUsed lists the default-table entries that priced some GPU.
func (p *Pricer) DefaultsUsed() []string { return slices.Sorted(maps.Keys(p.used)) }

// Unmatched lists the models priced at the fallback price.
func (p *Pricer) Unmatched() []string { return slices.Sorted(maps.Keys(p.unmatched)) }

// KeyWarnings says which of the user's price keys priced none of the
// models priced so far, each with the models it could have meant (those
// whose name holds every word of the key): a key is matched as a
// substring of the model's name, so "A100 80GB" prices no
// "NVIDIA A100-SXM4-80GB", whose GPUs then take another price.
func (p *Pricer) KeyWarnings() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(p.user)) {
		if p.userUsed[k] || len(p.memo) == 0 {
			continue
		}
		var meant []string
		for _, model := range slices.Sorted(maps.Keys(p.memo)) {
			if holdsWords(model, k) {
				meant = append(meant, fmt.Sprintf("%q", model))
			}
		}
		w := fmt.Sprintf("the price key %q matches no GPU model priced (a key must be part of the model's name)", k)
		if len(meant) > 0 {
			w += ": did you mean " + strings.Join(meant, " or ") + "? those are priced as " + p.match(strings.Trim(meant[0], `"`)).source
		}
		out = append(out, w)
	}
	return out
}

// holdsWords: every word of key (letters and digits) is in model's name.
func holdsWords(model, key string) bool {
	words := strings.FieldsFunc(strings.ToLower(key), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	m := strings.ToLower(model)
	for _, w := range words {
		if !strings.Contains(m, w) {
			return false
		}
	}
	return len(words) > 0
}

// DefaultGPUHourUSD is the fallback price of a model with no price, unless
// the user sets one (pricing.default_gpu_hour_usd).
const DefaultGPUHourUSD = 1.0

// Fallback is the price of a model that matches no entry.
func (p *Pricer) Fallback() float64 { return p.fallback }

// Where a price came from (Source).
const (
	SourceUser     = "user"           // --gpu-price, pricing.gpu_hour_usd
	SourceTable    = "built-in table" // DefaultPrices
	SourceFallback = "built-in fallback"
)

// Source says where the model's price comes from: the user's prices, the
// built-in table or the fallback price.
func (p *Pricer) Source(model string) string {
	return p.match(model).source
}
