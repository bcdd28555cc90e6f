package apipath

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"kubevirt.dev/virt/bench/fixture"
)

// Target is one way to reach one collection of objects.
type Target struct {
	// Name is how the report calls it.
	Name string
	// Client carries the credentials; Base is the server's URL.
	Client *http.Client
	Base   string
	// Namespace holds the collection.
	Namespace string
	// Collection is the namespaced collection's path, e.g.
	// /api/v1/namespaces/ns/configmaps.
	Collection string
	// Body is what a create posts (generateName: one body for every create).
	Body fixture.Body
	// Accept is the content type asked of responses and lists.
	Accept string
	// Header is added to every request (a bearer token).
	Header http.Header
}

func (t Target) do(ctx context.Context, method, url string, body []byte, want int) (int64, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", t.Body.ContentType)
	}
	req.Header.Set("Accept", t.Accept)
	resp, err := t.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, msg)
	}
	// The response is read to its end, as a client that uses it would,
	// but not decoded: decoding costs the client, not the server.
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, fmt.Errorf("%s %s: read response: %w", method, url, err)
	}
	return n, nil
}

// Create posts the body once.
func (t Target) Create(ctx context.Context) error {
	_, err := t.do(ctx, http.MethodPost, t.Base+t.Collection, t.Body.Data, http.StatusCreated)
	return err
}

// CreateNamed posts an object with a fixed name (body given).
func (t Target) CreateNamed(ctx context.Context, body fixture.Body) error {
	tt := t
	tt.Body = body
	_, err := tt.do(ctx, http.MethodPost, t.Base+t.Collection, body.Data, http.StatusCreated)
	return err
}

// Get reads one object.
func (t Target) Get(ctx context.Context, name string) error {
	_, err := t.do(ctx, http.MethodGet, t.Base+t.Collection+"/"+name, nil, http.StatusOK)
	return err
}

// List reads the whole collection in one response and returns its size.
func (t Target) List(ctx context.Context) (int64, error) {
	return t.do(ctx, http.MethodGet, t.Base+t.Collection, nil, http.StatusOK)
}

// Count asks for one item and reads how many remain: a cheap exact count.
func (t Target) Count(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.Base+t.Collection+"?limit=1", nil)
	if err != nil {
		return 0, err
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", fixture.JSON)
	resp, err := t.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", t.Collection, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("count %s: %s", t.Collection, resp.Status)
	}
	var l struct {
		Metadata struct {
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		return 0, fmt.Errorf("count %s: %w", t.Collection, err)
	}
	n := len(l.Items)
	if l.Metadata.RemainingItemCount != nil {
		n += int(*l.Metadata.RemainingItemCount)
	}
	return n, nil
}
