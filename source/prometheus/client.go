package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedance/seedance/internal/httpc"

	"github.com/seedance/seedance/internal/jsonscan"
	"github.com/seedance/seedance/source/dcgm"
)

// promClient queries Prometheus's HTTP API (/api/v1/query). Errors never
// carry the URL's credentials, and HTTP settings (auth, TLS, proxy,
// headers) come from prometheus/common's HTTPClientConfig.
type promClient struct {
	base    *url.URL
	http    *http.Client
	retries int
	backoff time.Duration
}

// ErrPrometheus marks a query that failed after its retries.
var ErrPrometheus = errors.New("prometheus query failed")

// retryable is a failure worth another try: the network, a timeout, 429,
// 5xx. after is the server's Retry-After, when it sent one.
type retryable struct {
	err   error
	after time.Duration
}

func (r retryable) Error() string { return r.err.Error() }

// query runs an instant query at t and returns its series (a matrix or a
// vector) and the server's warnings. It retries network errors, timeouts,
// 429 and 5xx with exponential backoff; a 4xx fails at once, naming the
// query.
func (c *promClient) query(ctx context.Context, q string, t time.Time) (*promAnswer, error) {
	var last error
	var wait time.Duration
	for attempt := 0; attempt <= c.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
		}
		ans, err := c.once(ctx, q, t)
		var r retryable
		if err == nil || !errors.As(err, &r) || ctx.Err() != nil {
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrPrometheus, q, err)
			}
			return ans, nil
		}
		last = r.err
		wait = retryWait(c.backoff, attempt+1, r.after)
	}
	return nil, fmt.Errorf("%w after %d tries: %s: %v", ErrPrometheus, c.retries+1, q, last)
}

// maxAnswerBytes bounds one Prometheus answer: a body that never ends, or
// one far larger than a chunk of dcgm-exporter series, is refused instead
// of filling memory.
const maxAnswerBytes = 256 << 20

// tooLarge names the bound that refused an answer, if one did: its body's
// bytes, or the memory the answers being parsed hold together (one-sample
// series cost about six times their JSON parsed, so a 60 MB answer can
// trip it).
func tooLarge(body *capped, mem *answerMem) error {
	const advice = "read a shorter range per query (--prometheus-chunk) or fewer series (--selector)"
	switch {
	case mem.over:
		return fmt.Errorf("the answers being parsed would hold more than %d MiB in memory together (this one refused after %d MiB of JSON): %s", answersBudget>>20, (maxAnswerBytes-body.left)>>20, advice)
	case body.over:
		return fmt.Errorf("the answer is larger than %d MiB: %s", maxAnswerBytes>>20, advice)
	}
	return nil
}

// capped reads at most left bytes, then fails.
type capped struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.over = true
		return 0, errors.New("answer too large")
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// maxRetryAfter caps how long a server may ask seedance to wait.
const maxRetryAfter = 5 * time.Minute

// retryWait is how long to wait before retry number attempt+1: what the
// server asked for (Retry-After, at most maxRetryAfter) when it did, else
// exponential backoff; either with up to 20 % of random jitter added, so
// that many queries (or many seedance runs from cron) that failed together
// do not come back together.
func retryWait(backoff time.Duration, attempt int, after time.Duration) time.Duration {
	d := min(backoff<<min(max(attempt-1, 0), 16), maxRetryAfter)
	if after > 0 {
		d = min(after, maxRetryAfter)
	}
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func (c *promClient) once(ctx context.Context, q string, t time.Time) (*promAnswer, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/query"
	form := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', 3, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, errors.New("cannot build request: " + httpc.RedactErr(err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, retryable{err: errors.New(httpc.RedactErr(err))}
	}
	defer resp.Body.Close()
	body := &capped{r: resp.Body, left: maxAnswerBytes}
	mem := &answerMem{}
	ans, perr := parsePromAnswerLimit(body, maxSamplesFor(q), mem)
	mem.release()
	if err := tooLarge(body, mem); err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, retryable{fmt.Errorf("HTTP %d %s", resp.StatusCode, ans.errText()), retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	case resp.StatusCode >= 400:
		msg := ans.errText()
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	case perr != nil:
		if ans.Status == "" {
			return nil, fmt.Errorf("not a Prometheus API answer (is %s a Prometheus server?): %v", c.base.Redacted(), perr)
		}
		return nil, retryable{err: fmt.Errorf("reading the answer: %v", perr)}
	case ans.Status == "":
		return nil, fmt.Errorf("not a Prometheus API answer (no \"status\"; is %s a Prometheus server?)", c.base.Redacted())
	case ans.Status != "success":
		return nil, fmt.Errorf("status %q: %s", ans.Status, strings.TrimPrefix(ans.ErrorType+": "+ans.Error, ": "))
	}
	return ans, nil
}

// promAnswer is a parsed /api/v1/query answer: a matrix or a vector as a
// list of series.
type promAnswer struct {
	Status, ErrorType, Error string
	Warnings                 []string
	Series                   []promSeries
}

// promSeries is one series of an answer.
type promSeries struct {
	Labels map[string]string
	Pairs  []dcgm.Pair
}

func (a *promAnswer) errText() string {
	if a == nil {
		return ""
	}
	return a.Error
}

// parsePromAnswer reads an answer with seedance's profile scanner: the
// samples go straight into compact pairs, without encoding/json's
// reflection or a copy of the body, which matters at millions of samples.
func parsePromAnswer(r io.Reader) (*promAnswer, error) { return parsePromAnswerLimit(r, 0, nil) }

// rangeSelector finds the range of a query's range selector, [7200000ms],
// or of its subquery, [7200000ms:15000ms].
var rangeSelector = regexp.MustCompile(`\[(\d+)ms(?::\d+ms)?\]$`)

// maxSamplesFor bounds the samples of one series in the answer to a query
// by its range: one per 100 ms (no exporter is scraped faster), so that a
// server cannot send endless series; one for a query whose answer is an
// instant vector.
func maxSamplesFor(q string) int {
	m := rangeSelector.FindStringSubmatch(q)
	if m == nil {
		return 1
	}
	ms, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || ms/100 > math.MaxInt32 {
		return 0
	}
	return int(ms/100) + 2
}

// parsePromAnswerLimit is parsePromAnswer with at most maxPerSeries samples
// in a series (0: any number), what it holds charged to mem (nil: not
// charged).
func parsePromAnswerLimit(r io.Reader, maxPerSeries int, mem *answerMem) (*promAnswer, error) {
	a := &promAnswer{}
	bp := answerBuffers.Get().(*[]byte)
	sc := jsonscan.NewBuffer(r, *bp)
	defer func() { // every string and number is copied out of it
		if b := sc.Buffer(); cap(b) <= 1<<20 {
			*bp = b
			answerBuffers.Put(bp)
		}
	}()
	err := sc.Object(func(key string) error {
		switch key {
		case "status":
			return sc.Decode(&a.Status)
		case "errortype":
			return sc.Decode(&a.ErrorType)
		case "error":
			return sc.Decode(&a.Error)
		case "warnings":
			return sc.Decode(&a.Warnings)
		case "data":
			return sc.Object(func(key string) error {
				if key != "result" {
					return sc.Skip()
				}
				shared := map[string]string{}
				return sc.Array(func(int) error {
					s, err := parsePromSeries(sc, maxPerSeries, shared, mem)
					c := cap(a.Series)
					a.Series = append(a.Series, s)
					if err == nil {
						err = mem.add(int64(cap(a.Series)-c) * seriesBytes)
					}
					return err
				})
			})
		}
		return sc.Skip()
	})
	if err == nil {
		err = sc.End()
	}
	return a, err
}

// answerBuffers are the scanners' buffers, reused from answer to answer:
// a read asks thousands of queries.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// parsePromSeries reads one series of an answer; shared holds the label
// names and values read so far, which most series repeat.
func parsePromSeries(sc *jsonscan.Scanner, maxPerSeries int, shared map[string]string, mem *answerMem) (promSeries, error) {
	var s promSeries
	pair := func() error {
		p, err := parsePromPair(sc)
		c := cap(s.Pairs)
		s.Pairs = append(s.Pairs, p)
		if err != nil {
			return err
		}
		return mem.add(int64(cap(s.Pairs)-c) * pairBytes)
	}
	err := sc.Object(func(key string) error {
		switch key {
		case "metric":
			var err error
			if s.Labels, err = parseLabels(sc, shared); err != nil {
				return err
			}
			return mem.add(labelsCost(s.Labels))
		case "values":
			return sc.Array(func(int) error {
				if maxPerSeries > 0 && len(s.Pairs) == maxPerSeries {
					return sc.Errorf("a series with more than %d samples, more than the query can return (one per 100 ms of its range)", maxPerSeries)
				}
				return pair()
			})
		case "value":
			return pair()
		}
		return sc.Skip()
	})
	return s, err
}

// maxShared bounds the strings one answer shares between its series.
const maxShared = 1 << 16

// parseLabels reads a series' labels, {"name": "value", …} (null: none),
// with the strings shared shares; names keep their case.
func parseLabels(sc *jsonscan.Scanner, shared map[string]string) (map[string]string, error) {
	if sc.Peek() == 'n' {
		return nil, sc.Literal("null")
	}
	if err := sc.Expect('{'); err != nil {
		return nil, err
	}
	labels := map[string]string{}
	if sc.Peek() == '}' {
		sc.Advance()
		return labels, nil
	}
	for {
		if sc.Peek() != '"' {
			return nil, sc.Errorf("a label's name must be a string")
		}
		k, err := sharedStr(sc, shared)
		if err != nil {
			return nil, err
		}
		if err := sc.Expect(':'); err != nil {
			return nil, err
		}
		v, err := sharedStr(sc, shared)
		if err != nil {
			return nil, err
		}
		labels[k] = v
		if done, err := sc.Next('}'); done || err != nil {
			return labels, err
		}
	}
}

// sharedStr reads a string, the one in shared when it is there.
func sharedStr(sc *jsonscan.Scanner, shared map[string]string) (string, error) {
	switch sc.Peek() {
	case '"':
	case 'n': // null: the empty string, as encoding/json reads it
		return "", sc.Literal("null")
	default:
		if err := sc.Skip(); err != nil {
			return "", err // its nesting, its syntax
		}
		return "", sc.Errorf("a label must be a string")
	}
	tok, err := sc.Token()
	if err != nil {
		return "", err
	}
	raw := tok[1 : len(tok)-1]
	if v, ok := shared[string(raw)]; ok {
		return v, nil
	}
	if !jsonscan.Plain(raw) {
		var out string
		if err := json.Unmarshal(tok, &out); err != nil {
			return "", sc.Errorf("invalid string")
		}
		return out, nil
	}
	v := string(raw)
	if len(shared) < maxShared {
		shared[v] = v
	}
	return v, nil
}

// parsePromPair reads [1767571200.123, "42"].
func parsePromPair(sc *jsonscan.Scanner) (dcgm.Pair, error) {
	if err := sc.Expect('['); err != nil {
		return dcgm.Pair{}, err
	}
	ts, err := sc.Number()
	if err != nil {
		return dcgm.Pair{}, err
	}
	if err := sc.Expect(','); err != nil {
		return dcgm.Pair{}, err
	}
	tok, err := sc.Token()
	if err != nil {
		return dcgm.Pair{}, err
	}
	if len(tok) < 2 || tok[0] != '"' {
		return dcgm.Pair{}, sc.Errorf("a sample value must be a string")
	}
	raw := tok[1 : len(tok)-1]
	v, err := jsonscan.ParseNumber(raw)
	if err != nil {
		return dcgm.Pair{}, sc.Errorf("bad sample value %q", raw)
	}
	if err := sc.Expect(']'); err != nil {
		return dcgm.Pair{}, err
	}
	return dcgm.Pair{TMillis: int64(math.Round(ts * 1000)), V: v}, nil
}
