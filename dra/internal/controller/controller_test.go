package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"tessera.local/dra/internal/slices"
	"tessera.local/dra/internal/steer"
)

// policyServer stands in for `tessera serve`: it records each request and
// offers, for 1g.10gb, the start after the last one placed on the first
// node's GPU 0.
type policyServer struct {
	mu       sync.Mutex
	requests []steer.Request
}

func (p *policyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req steer.Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Nodes == nil || req.Events == nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.requests = append(p.requests, req)
	p.mu.Unlock()
	geometry := steer.Geometry{Model: "a100-80gb", MemorySlices: 8, ComputeSlices: 7, MemoryMiB: 81920}
	for s := 0; s < 7; s++ {
		geometry.Placements = append(geometry.Placements, steer.Placement{Profile: "1g.10gb", ProfileID: 19, Start: s, Size: 1, ComputeSlices: 1, MemoryMiB: 9728})
	}
	resp := steer.Response{Geometry: geometry}
	next := 0
	for _, e := range req.Events {
		if e.Op == steer.OpPlace {
			next = e.Start + 1
		}
	}
	if len(req.Nodes) > 0 && next < 7 {
		resp.Offers = []steer.Offer{{Profile: "1g.10gb", Node: req.Nodes[0].Name, GPU: 0, Start: next}}
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// last is the latest request; an empty one before the first.
func (p *policyServer) last() steer.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.requests) == 0 {
		return steer.Request{}
	}
	return p.requests[len(p.requests)-1]
}

// newKube is a fake API server that names objects created with a
// generateName, as the real one does (the ResourceSlice controller relies
// on it).
func newKube(objects ...runtime.Object) *fake.Clientset {
	kube := fake.NewClientset(objects...)
	var n atomic.Int64
	kube.PrependReactor("create", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if obj, ok := action.(k8stesting.CreateAction).GetObject().(metav1.Object); ok && obj.GetName() == "" && obj.GetGenerateName() != "" {
			obj.SetName(fmt.Sprintf("%s%05d", obj.GetGenerateName(), n.Add(1)))
		}
		return false, nil, nil
	})
	return kube
}

func gpuNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		AnnotationGPUs: `[{"index":0,"uuid":"GPU-0","model":"NVIDIA A100-SXM4-80GB"}]`,
	}}}
}

func allocated(name string, created time.Time, node, device string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created),
	}}
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
		Results: []resourceapi.DeviceRequestAllocationResult{{Request: "mig", Driver: slices.DriverName, Pool: node, Device: device}},
	}}
	return c
}

// published lists the driver's devices in the fake API server, sorted.
func published(t *testing.T, kube *fake.Clientset) []string {
	list, err := kube.ResourceV1().ResourceSlices().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		for _, d := range s.Spec.Devices {
			out = append(out, s.Spec.Pool.Name+"/"+d.Name)
		}
	}
	sort.Strings(out)
	return out
}

func eventually(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func start(t *testing.T, kube *fake.Clientset, policy *policyServer, publishAll bool) (*Controller, context.CancelFunc) {
	t.Helper()
	server := httptest.NewServer(policy)
	t.Cleanup(server.Close)
	client, err := steer.NewClient(server.URL, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Kube: kube, Steer: client, GPU: "a100-80gb", Policy: "grmu", PublishAll: publishAll, Resync: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return c, stop
}

func TestSteeredPublishesTheAllocatedDevicesAndTheOffers(t *testing.T) {
	kube := newKube(gpuNode("node-a"))
	policy := &policyServer{}
	c, _ := start(t, kube, policy, false)
	eventually(t, "the first offer", func() bool { return fmt.Sprint(published(t, kube)) == "[node-a/gpu0-1g-10gb-s0]" })

	claim := allocated("a", time.Now(), "node-a", "gpu0-1g-10gb-s0")
	if _, err := kube.ResourceV1().ResourceClaims("default").Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the allocation and the next offer", func() bool {
		return fmt.Sprint(published(t, kube)) == "[node-a/gpu0-1g-10gb-s0 node-a/gpu0-1g-10gb-s1]"
	})
	if events := policy.last().Events; len(events) != 1 || events[0] != (steer.Event{Op: "place", Claim: "uid-a/gpu0-1g-10gb-s0", Profile: "1g.10gb", Node: "node-a", GPU: 0, Start: 0}) {
		t.Fatalf("events %+v", events)
	}
	if err := kube.ResourceV1().ResourceClaims("default").Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the release", func() bool {
		events := policy.last().Events
		return len(events) == 2 && events[1] == steer.Event{Op: "release", Claim: "uid-a/gpu0-1g-10gb-s0"}
	})
	if s := c.Status(); s.Events != 2 || s.Allocated != 0 || s.Mode != "steered" {
		t.Fatalf("status %+v", s)
	}
}

func TestARestartedControllerLogsTheAllocatedClaimsOldestFirst(t *testing.T) {
	now := time.Now()
	kube := newKube(gpuNode("node-a"),
		allocated("z-older", now.Add(-time.Hour), "node-a", "gpu0-1g-10gb-s3"),
		allocated("a-newer", now, "node-a", "gpu0-1g-10gb-s5"),
		allocated("elsewhere", now, "node-b", "gpu0-1g-10gb-s0"), // a node without GPUs known
	)
	policy := &policyServer{}
	start(t, kube, policy, false)
	eventually(t, "the rebuilt log", func() bool { return len(policy.last().Events) == 2 })
	events := policy.last().Events
	if events[0].Claim != "uid-z-older/gpu0-1g-10gb-s3" || events[1].Claim != "uid-a-newer/gpu0-1g-10gb-s5" {
		t.Fatalf("the log is not oldest first: %+v", events)
	}
}

func TestPublishAllOffersEveryPlacement(t *testing.T) {
	kube := newKube(gpuNode("node-a"), gpuNode("node-b"))
	start(t, kube, &policyServer{}, true)
	eventually(t, "every placement", func() bool { return len(published(t, kube)) == 14 })
}

func TestBadGPUAnnotationsAreRefusedNamingThem(t *testing.T) {
	for _, bad := range []string{`[]`, `{`, `[{"index":-1}]`, `[{"index":0},{"index":0}]`, `[{"index":0,"x":1}]`} {
		if _, err := ParseGPUs(bad); err == nil || !strings.Contains(err.Error(), AnnotationGPUs) {
			t.Errorf("%s: want an error naming %s, got %v", bad, AnnotationGPUs, err)
		}
	}
	if gpus, err := ParseGPUs(`[{"index":3,"uuid":"GPU-3","model":"m"}]`); err != nil || gpus[0].Index != 3 {
		t.Fatalf("%v %v", gpus, err)
	}
}

func TestAnUnreachablePolicyServerFailsTheStart(t *testing.T) {
	client, err := steer.NewClient("http://127.0.0.1:1", "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Kube: newKube(), Steer: client, GPU: "a100-80gb", Policy: "grmu"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "/v1/dra/offers") {
		t.Fatalf("want the failed call named, got %v", err)
	}
}
