// Command etcdbench measures the two ways a client can reach etcd v3 from
// `tessera serve`'s point of view: etcd's gRPC API (the official Go client,
// go.etcd.io/etcd/client/v3) and its JSON gateway (HTTP/1.1 keep-alive,
// base64 keys and values), both sending the transaction the EtcdStore sends
// for a write (a compare on a key's create revision, a range compare, two
// puts), and a linearizable range. Rounds alternate between the two so a
// busy machine weighs on both alike. It prints, per transport and request,
// the median and 99th percentile in microseconds.
//
//	etcdbench -endpoint http://127.0.0.1:2379 -n 2000
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func quantiles(d []time.Duration) (time.Duration, time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2], d[(len(d)*99)/100]
}

func main() {
	endpoint := flag.String("endpoint", "http://127.0.0.1:2379", "an etcd client URL")
	n := flag.Int("n", 2000, "requests of each kind per transport")
	flag.Parse()
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{*endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdbench:", err)
		os.Exit(1)
	}
	defer cli.Close()
	const fence = "/etcdbench/election/a"
	put, err := cli.Put(ctx, fence, "x")
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdbench:", err)
		os.Exit(1)
	}
	rev := put.Header.Revision
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(path string, body any) error {
		raw, _ := json.Marshal(body)
		resp, err := httpc.Post(strings.TrimRight(*endpoint, "/")+path, "application/json", bytes.NewReader(raw))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
		}
		return nil
	}
	times := map[string][]time.Duration{}
	record := func(name string, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, "etcdbench:", name, err)
			os.Exit(1)
		}
		times[name] = append(times[name], time.Since(start))
	}
	for i := 0; i < *n; i++ {
		value := fmt.Sprint(i)
		grpcTxn := func() error {
			_, err := cli.Txn(ctx).If(
				clientv3.Compare(clientv3.CreateRevision(fence), "=", rev),
				clientv3.Compare(clientv3.CreateRevision("/etcdbench/election/"), ">", rev-1).WithPrefix(),
			).Then(clientv3.OpPut("/etcdbench/service/bert", value), clientv3.OpPut("/etcdbench/writer", "a")).Commit()
			return err
		}
		gatewayTxn := func() error {
			return post("/v3/kv/txn", map[string]any{
				"compare": []any{
					map[string]any{"key": b64(fence), "target": "CREATE", "result": "EQUAL", "create_revision": fmt.Sprint(rev)},
					map[string]any{"key": b64("/etcdbench/election/"), "range_end": b64("/etcdbench/election0"), "target": "CREATE", "result": "GREATER", "create_revision": fmt.Sprint(rev - 1)},
				},
				"success": []any{
					map[string]any{"request_put": map[string]any{"key": b64("/etcdbench/service/bert"), "value": b64(value)}},
					map[string]any{"request_put": map[string]any{"key": b64("/etcdbench/writer"), "value": b64("a")}},
				},
			})
		}
		grpcRange := func() error {
			_, err := cli.Get(ctx, "/etcdbench/election/", clientv3.WithPrefix(), clientv3.WithLimit(1))
			return err
		}
		gatewayRange := func() error {
			return post("/v3/kv/range", map[string]any{"key": b64("/etcdbench/election/"), "range_end": b64("/etcdbench/election0"), "limit": "1"})
		}
		if i%2 == 0 {
			record("grpc txn", grpcTxn)
			record("gateway txn", gatewayTxn)
			record("grpc range", grpcRange)
			record("gateway range", gatewayRange)
		} else {
			record("gateway txn", gatewayTxn)
			record("grpc txn", grpcTxn)
			record("gateway range", gatewayRange)
			record("grpc range", grpcRange)
		}
	}
	for _, name := range []string{"grpc range", "gateway range", "grpc txn", "gateway txn"} {
		p50, p99 := quantiles(times[name])
		fmt.Printf("%-14s p50 %6d us  p99 %6d us  (%d requests)\n", name, p50.Microseconds(), p99.Microseconds(), len(times[name]))
	}
}
