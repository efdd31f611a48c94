// Package steer asks Tessera which MIG placements the DRA allocator may take.
//
// The policy (GRMU, fair, best-fit and the rest of `tessera replay`'s
// policies) runs in `tessera serve`, behind POST /v1/dra/offers. The call is
// a pure function of its request: the cluster's nodes, the policy, and the
// ordered log of every allocation and release so far. Tessera replays the log
// through the policy and answers, for each MIG profile, the placement the
// policy would give the next claim of that profile, with the GPU model's
// geometry (its legal placements and capacities). Because the answer depends
// only on the request, any `tessera serve` replica answers it and a restarted
// controller loses nothing it cannot rebuild from the cluster's claims.
package steer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Placement is one legal (profile, start) of a GPU model.
type Placement struct {
	Profile       string `json:"profile"`    // "1g.10gb"
	ProfileID     int    `json:"profile_id"` // nvidia-smi's GI profile ID
	Start         int    `json:"start"`      // first memory slice
	Size          int    `json:"size"`       // memory slices
	ComputeSlices int    `json:"compute_slices"`
	MemoryMiB     int64  `json:"memory_mib"`
}

// Geometry is a GPU model as Tessera's catalog has it.
type Geometry struct {
	Model         string      `json:"model"` // "A100-80GB"
	MemorySlices  int         `json:"memory_slices"`
	ComputeSlices int         `json:"compute_slices"`
	MemoryMiB     int64       `json:"memory_mib"`
	Placements    []Placement `json:"placements"`
}

// Node is one node of the cluster and its MIG GPUs.
type Node struct {
	Name string `json:"name"`
	GPUs int    `json:"gpus"`
}

// Event ops.
const (
	OpPlace   = "place"
	OpRelease = "release"
)

// Event is one allocation ("place": Claim got Profile at Node/GPU/Start) or
// release ("release": Claim's instance is gone) in the order they happened.
type Event struct {
	Op      string `json:"op"`
	Claim   string `json:"claim"`
	Profile string `json:"profile,omitempty"`
	Node    string `json:"node,omitempty"`
	GPU     int    `json:"gpu"`
	Start   int    `json:"start"`
}

// Request is the body of POST /v1/dra/offers.
type Request struct {
	GPU    string  `json:"gpu"`    // catalog model, e.g. "a100-80gb"
	Policy string  `json:"policy"` // a `tessera replay` policy
	Nodes  []Node  `json:"nodes"`
	Events []Event `json:"events"`
}

// Offer is the placement the policy gives the next claim of Profile.
type Offer struct {
	Profile string `json:"profile"`
	Node    string `json:"node"`
	GPU     int    `json:"gpu"`
	Start   int    `json:"start"`
}

// Response is the answer of POST /v1/dra/offers.
type Response struct {
	Geometry Geometry `json:"geometry"`
	// At most one offer per profile; a profile the policy refuses has none.
	Offers []Offer `json:"offers"`
	// Place events where the policy chose the recorded placement, and those
	// it did not (the allocator took another device; Tessera adopted it).
	Followed int `json:"followed"`
	Adopted  int `json:"adopted"`
}

// Client calls POST /v1/dra/offers on the first `tessera serve` replica of
// its list that answers.
type Client struct {
	servers []string
	token   string
	http    *http.Client
}

// NewClient takes comma-separated http://HOST:PORT URLs and a bearer token
// ("" when the server needs none).
func NewClient(servers, token string, timeout time.Duration) (*Client, error) {
	var list []string
	for _, s := range strings.Split(servers, ",") {
		if s == "" {
			return nil, fmt.Errorf("--tessera %q: an empty URL in the list", servers)
		}
		if !strings.HasPrefix(s, "http://") || strings.Count(s, "/") != 2 || strings.HasSuffix(s, ":") {
			return nil, fmt.Errorf("--tessera %q: want http://HOST:PORT (put TLS in a proxy)", s)
		}
		list = append(list, s)
	}
	return &Client{servers: list, token: token, http: &http.Client{Timeout: timeout}}, nil
}

// Offers sends the request to each replica in turn until one answers 200.
func (c *Client) Offers(ctx context.Context, request *Request) (*Response, error) {
	sent := *request
	// JSON arrays, never null.
	if sent.Nodes == nil {
		sent.Nodes = []Node{}
	}
	if sent.Events == nil {
		sent.Events = []Event{}
	}
	body, err := json.Marshal(&sent)
	if err != nil {
		return nil, err
	}
	var failures []string
	for _, server := range c.servers {
		response, err := c.post(ctx, server, body)
		if err == nil {
			return response, nil
		}
		failures = append(failures, err.Error())
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("POST /v1/dra/offers: %s", strings.Join(failures, "; "))
}

func (c *Client) post(ctx context.Context, server string, body []byte) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, server+"/v1/dra/offers", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", server, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %d: %s", server, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var out Response
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: the answer is not an offers document: %w", server, err)
	}
	return &out, nil
}
