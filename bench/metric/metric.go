package metric

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Sample is one series: its name, labels and value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape GETs url with client and parses the text exposition format.
func Scrape(ctx context.Context, client *http.Client, url string, header http.Header) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("scrape %s: %s: %s", url, resp.Status, msg)
	}
	s, err := Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return s, nil
}

// Parse reads the text exposition format.
func Parse(r io.Reader) ([]Sample, error) {
	var out []Sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseLine(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	rest := line
	if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
		s.Name = line[:i]
		j := strings.LastIndex(line, "}")
		if j < i {
			return s, fmt.Errorf("bad series %q", line)
		}
		if err := parseLabels(line[i+1:j], s.Labels); err != nil {
			return s, fmt.Errorf("series %q: %w", line, err)
		}
		rest = line[j+1:]
	} else {
		f := strings.Fields(line)
		s.Name, rest = f[0], strings.TrimPrefix(line, f[0])
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return s, fmt.Errorf("series %q has no value", line)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, fmt.Errorf("series %q: %w", line, err)
	}
	s.Value = v
	return s, nil
}

func parseLabels(in string, into map[string]string) error {
	for in != "" {
		eq := strings.Index(in, "=")
		if eq < 0 || eq+1 >= len(in) || in[eq+1] != '"' {
			return fmt.Errorf("bad labels %q", in)
		}
		name := strings.TrimSpace(in[:eq])
		var val strings.Builder
		i := eq + 2
		for ; i < len(in) && in[i] != '"'; i++ {
			if in[i] == '\\' && i+1 < len(in) {
				i++
				switch in[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(in[i])
				}
				continue
			}
			val.WriteByte(in[i])
		}
		into[name] = val.String()
		in = strings.TrimLeft(in[min(i+1, len(in)):], ", ")
	}
	return nil
}

// Sum adds the values of the series called name whose labels include all
// of match.
func Sum(samples []Sample, name string, match map[string]string) float64 {
	var t float64
	for _, s := range samples {
		if s.Name == name && matches(s.Labels, match) {
			t += s.Value
		}
	}
	return t
}

func matches(l, m map[string]string) bool {
	for k, v := range m {
		if l[k] != v {
			return false
		}
	}
	return true
}
