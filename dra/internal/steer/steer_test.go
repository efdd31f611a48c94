package steer

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestOffersTriesEachReplicaAndSendsArraysWithTheToken(t *testing.T) {
	var body string
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		body = string(data)
		if r.URL.Path != "/v1/dra/offers" || r.Header.Get("Authorization") != "Bearer t0ken" ||
			r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "wrong call", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(Response{Offers: []Offer{{Profile: "1g.10gb", Node: "n", GPU: 1, Start: 6}}, Followed: 3})
	}))
	defer good.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	client, err := NewClient(down.URL+","+good.URL, "t0ken", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Offers(context.Background(), &Request{GPU: "a100-80gb", Policy: "grmu"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Offers) != 1 || resp.Offers[0].Start != 6 || resp.Followed != 3 {
		t.Fatalf("%+v", resp)
	}
	if !strings.Contains(body, `"nodes":[]`) || !strings.Contains(body, `"events":[]`) {
		t.Fatalf("nil lists must go as JSON arrays: %s", body)
	}
}

func TestAnErrorAnswerIsReportedWithItsBody(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"policy: unknown"}}`, http.StatusBadRequest)
	}))
	defer bad.Close()
	garbled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "not json")
	}))
	defer garbled.Close()
	client, _ := NewClient(bad.URL+","+garbled.URL, "", time.Second)
	_, err := client.Offers(context.Background(), &Request{})
	if err == nil || !strings.Contains(err.Error(), "answered 400") || !strings.Contains(err.Error(), "policy: unknown") ||
		!strings.Contains(err.Error(), "not an offers document") {
		t.Fatalf("want both failures named, got %v", err)
	}
}

func TestServerListsAreCheckedOnce(t *testing.T) {
	for _, bad := range []string{"", "http://a:1,", "https://a:1", "a:1", "http://a:1/x", "http://a:"} {
		if _, err := NewClient(bad, "", time.Second); err == nil || !strings.Contains(err.Error(), "--tessera") {
			t.Errorf("%q: want an error naming --tessera, got %v", bad, err)
		}
	}
	if _, err := NewClient("http://a:1,http://b:2", "", time.Second); err != nil {
		t.Fatal(err)
	}
}
