package sources

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const (
	testRepo   = "acme/tiny-model"
	testCommit = "0123456789abcdef0123456789abcdef01234567"
	testToken  = "hf_SuperSecretTokenValue123"
)

// fakeFile is one file of the fake hub's only repository.
type fakeFile struct {
	content []byte
	lfs     bool   // served as the hub serves LFS files: 302 to the CDN with X-Linked-Etag
	corrupt []byte // what the CDN sends instead of content, if set
}

// fakeHub plays huggingface.co (hub) and its CDN (a second server, so a second host).
type fakeHub struct {
	hub, cdn *httptest.Server
	files    map[string]fakeFile // path in the repo → file
	refs     map[string]string   // branch or tag → commit
	token    string              // required when set
	renamed  string              // an old repo name that redirects to testRepo

	hubReqs, cdnReqs atomic.Int32
	mu               sync.Mutex
	hubAuth, cdnAuth []string // Authorization headers seen
}

func gitBlobSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func newFakeHub(t *testing.T) *fakeHub {
	f := &fakeHub{
		files: map[string]fakeFile{
			"onnx/model.onnx": {content: bytes.Repeat([]byte("onnx-weights-"), 1000), lfs: true},
			"config.json":     {content: []byte(`{"model_type":"bert"}`)},
		},
		refs: map[string]string{"main": testCommit, "v1.0": testCommit},
	}
	f.cdn = httptest.NewServer(http.HandlerFunc(f.serveCDN))
	f.hub = httptest.NewServer(http.HandlerFunc(f.serveHub))
	t.Cleanup(f.hub.Close)
	t.Cleanup(f.cdn.Close)
	return f
}

func (f *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	f.hubReqs.Add(1)
	f.mu.Lock()
	f.hubAuth = append(f.hubAuth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	// /ORG/REPO/resolve/REV/PATH
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	repo, rev, file := parts[0]+"/"+parts[1], parts[3], parts[4]
	if f.renamed != "" && repo == f.renamed {
		http.Redirect(w, r, "/"+testRepo+"/resolve/"+rev+"/"+file, http.StatusTemporaryRedirect)
		return
	}
	if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		// Echo what was sent, to prove Download keeps it out of its errors.
		w.Header().Set("X-Error-Code", "GatedRepo")
		w.Header().Set("X-Error-Message", "Access denied for "+r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "bad credentials %q", r.Header.Get("Authorization"))
		return
	}
	if repo != testRepo {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		w.WriteHeader(http.StatusNotFound)
		return
	}
	commit, ok := f.refs[rev]
	if !ok && rev == testCommit {
		commit, ok = testCommit, true
	}
	if !ok {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	ff, ok := f.files[file]
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if ff.lfs {
		sum := sha256Of(ff.content)
		w.Header().Set("ETag", `"`+gitBlobSHA1([]byte("version https://git-lfs.github.com/spec/v1\noid sha256:"+sum))+`"`)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		w.Header().Set("X-Linked-Size", fmt.Sprint(len(ff.content)))
		http.Redirect(w, r, f.cdn.URL+"/repos/xy/"+sum+"?X-Amz-Signature=cdnsig&file="+file, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `W/"`+gitBlobSHA1(ff.content)+`"`)
	w.Write(ff.content)
}

func (f *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	f.cdnReqs.Add(1)
	f.mu.Lock()
	f.cdnAuth = append(f.cdnAuth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	ff, ok := f.files[r.URL.Query().Get("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	body := ff.content
	if ff.corrupt != nil {
		body = ff.corrupt
	}
	w.Write(body)
}

func (f *fakeHub) auth() (hub, cdn []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.hubAuth...), append([]string(nil), f.cdnAuth...)
}

// isolateHF clears every variable that could point the client at a real token, cache
// or endpoint, and gives the test its own HF_HOME.
func isolateHF(t *testing.T) string {
	home := t.TempDir()
	for _, env := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_CACHE",
		"HF_ENDPOINT", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "XDG_CACHE_HOME"} {
		t.Setenv(env, "")
	}
	t.Setenv("HF_HOME", home)
	return home
}

func (f *fakeHub) client(t *testing.T) (*HubClient, string) {
	cache := filepath.Join(t.TempDir(), "hub")
	return &HubClient{Endpoint: f.hub.URL + "/", CacheDir: cache}, cache
}

// leftovers lists the non-directory entries under dir.
func leftovers(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestHubDownloadLayout(t *testing.T) {
	isolateHF(t)
	f := newFakeHub(t)
	c, cache := f.client(t)
	ctx := context.Background()
	repoDir := filepath.Join(cache, "models--acme--tiny-model")
	model := f.files["onnx/model.onnx"].content

	got, err := c.Download(ctx, testRepo, "onnx/model.onnx", "main", sha256Of(model))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(repoDir, "snapshots", testCommit, "onnx", "model.onnx")
	if got != want {
		t.Fatalf("path %s, want %s", got, want)
	}
	link, err := os.Readlink(got)
	if err != nil {
		t.Fatalf("snapshot entry is not a symlink: %v", err)
	}
	if wantLink := "../../../blobs/" + sha256Of(model); link != wantLink {
		t.Errorf("symlink → %s, want %s (relative, as huggingface_hub)", link, wantLink)
	}
	if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, model) {
		t.Errorf("content through the snapshot link: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(repoDir, "blobs", sha256Of(model))); err != nil || !bytes.Equal(b, model) {
		t.Errorf("blob named by the LFS etag: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(repoDir, "refs", "main")); err != nil || string(b) != testCommit {
		t.Errorf("refs/main = %q, %v; want %s", b, err, testCommit)
	}

	// A small (non-LFS) file: 200 from the hub itself, blob named by its git sha1 ETag.
	cfg := f.files["config.json"].content
	got, err = c.Download(ctx, testRepo, "config.json", "main", "")
	if err != nil {
		t.Fatal(err)
	}
	if link, _ := os.Readlink(got); link != "../../blobs/"+gitBlobSHA1(cfg) {
		t.Errorf("config.json → %s, want ../../blobs/%s", link, gitBlobSHA1(cfg))
	}
	for _, p := range leftovers(t, repoDir) {
		if strings.HasSuffix(p, ".incomplete") || strings.Contains(p, ".tmp") {
			t.Errorf("leftover %s", p)
		}
	}

	// What LocalPath says for a pinned source is where Download put the file.
	src, err := Parse("hf:" + testRepo + "/onnx/model.onnx@" + testCommit)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_CACHE", cache)
	if lp := LocalPath("/r", "", src); lp != want {
		t.Errorf("LocalPath %s, Download %s", lp, want)
	}
	if p, ok := c.Cached(testRepo, "onnx/model.onnx", "main"); !ok || p != want {
		t.Errorf("Cached(main) = %s, %v", p, ok)
	}
}

func TestHubDownloadCacheHitMakesNoRequest(t *testing.T) {
	isolateHF(t)
	f := newFakeHub(t)
	c, _ := f.client(t)
	ctx := context.Background()
	model := f.files["onnx/model.onnx"].content
	sum := sha256Of(model)

	first, err := c.Download(ctx, testRepo, "onnx/model.onnx", testCommit, sum)
	if err != nil {
		t.Fatal(err)
	}
	if f.hubReqs.Load() != 1 || f.cdnReqs.Load() != 1 {
		t.Fatalf("first download: %d hub, %d CDN requests, want 1 and 1", f.hubReqs.Load(), f.cdnReqs.Load())
	}
	// Pinned commit: no request at all, with or without a sha256.
	for _, want := range []string{sum, ""} {
		again, err := c.Download(ctx, testRepo, "onnx/model.onnx", testCommit, want)
		if err != nil || again != first {
			t.Fatalf("second download: %s, %v", again, err)
		}
	}
	if f.hubReqs.Load() != 1 || f.cdnReqs.Load() != 1 {
		t.Errorf("cache hit made requests: %d hub, %d CDN", f.hubReqs.Load(), f.cdnReqs.Load())
	}

	// A branch resolved through refs/ with a pinned sha256: no request either.
	if _, err := c.Download(ctx, testRepo, "onnx/model.onnx", "main", sum); err != nil {
		t.Fatal(err)
	}
	hub := f.hubReqs.Load()
	if _, err := c.Download(ctx, testRepo, "onnx/model.onnx", "main", sum); err != nil {
		t.Fatal(err)
	}
	if f.hubReqs.Load() != hub || f.cdnReqs.Load() != 1 {
		t.Errorf("pinned branch hit made requests: %d hub, %d CDN", f.hubReqs.Load()-hub, f.cdnReqs.Load()-1)
	}
	// An unpinned branch asks the hub where it points (as huggingface_hub does) but
	// does not download the blob it already has.
	if _, err := c.Download(ctx, testRepo, "onnx/model.onnx", "v1.0", ""); err != nil {
		t.Fatal(err)
	}
	if f.hubReqs.Load() != hub+1 || f.cdnReqs.Load() != 1 {
		t.Errorf("unpinned branch: %d hub, %d CDN requests; want 1 and 0", f.hubReqs.Load()-hub, f.cdnReqs.Load()-1)
	}
}

func TestHubDownloadSHA256Mismatch(t *testing.T) {
	isolateHF(t)
	ctx := context.Background()
	wrong := strings.Repeat("ab", 32)

	t.Run("pin differs from the LFS etag", func(t *testing.T) {
		f := newFakeHub(t)
		c, cache := f.client(t)
		_, err := c.Download(ctx, testRepo, "onnx/model.onnx", "main", wrong)
		if !errors.Is(err, ErrHubChecksum) || !strings.Contains(err.Error(), wrong) {
			t.Fatalf("err = %v, want a sha256 mismatch naming the pin", err)
		}
		if f.cdnReqs.Load() != 0 {
			t.Errorf("downloaded a file whose etag already disagreed with the pin")
		}
		if l := leftovers(t, cache); len(l) != 0 {
			t.Errorf("files left: %v", l)
		}
	})
	t.Run("content differs from the LFS etag", func(t *testing.T) {
		f := newFakeHub(t)
		ff := f.files["onnx/model.onnx"]
		ff.corrupt = bytes.Repeat([]byte("garbage-data-"), 1000)
		f.files["onnx/model.onnx"] = ff
		c, cache := f.client(t)
		// With and without a pin: the LFS etag is checked on its own.
		for _, want := range []string{sha256Of(ff.content), ""} {
			_, err := c.Download(ctx, testRepo, "onnx/model.onnx", "main", want)
			if !errors.Is(err, ErrHubChecksum) {
				t.Fatalf("pin %q: err = %v, want a sha256 mismatch", want, err)
			}
			if l := leftovers(t, cache); len(l) != 0 {
				t.Errorf("files left: %v", l)
			}
		}
	})
	t.Run("content differs from the pin", func(t *testing.T) {
		f := newFakeHub(t)
		c, cache := f.client(t)
		_, err := c.Download(ctx, testRepo, "config.json", testCommit, wrong)
		if !errors.Is(err, ErrHubChecksum) || !strings.Contains(err.Error(), sha256Of(f.files["config.json"].content)) {
			t.Fatalf("err = %v, want a sha256 mismatch naming what came", err)
		}
		if l := leftovers(t, cache); len(l) != 0 {
			t.Errorf("files left: %v", l)
		}
	})
}

func TestHubDownloadUnauthorized(t *testing.T) {
	isolateHF(t)
	ctx := context.Background()

	t.Run("no token", func(t *testing.T) {
		f := newFakeHub(t)
		f.token = testToken
		c, _ := f.client(t)
		_, err := c.Download(ctx, testRepo, "onnx/model.onnx", "main", "")
		if !errors.Is(err, ErrHubAuth) || !strings.Contains(err.Error(), "HF_TOKEN") {
			t.Fatalf("err = %v, want an auth error that mentions HF_TOKEN", err)
		}
		if hub, _ := f.auth(); hub[0] != "" {
			t.Errorf("sent Authorization %q with no token set", hub[0])
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		f := newFakeHub(t)
		f.token = "hf_TheRightOne"
		t.Setenv("HF_TOKEN", testToken)
		c, _ := f.client(t)
		var log bytes.Buffer
		c.Log = &log
		_, err := c.Download(ctx, testRepo, "onnx/model.onnx", "main", "")
		if !errors.Is(err, ErrHubAuth) || !strings.Contains(err.Error(), "HF_TOKEN") {
			t.Fatalf("err = %v, want an auth error that mentions HF_TOKEN", err)
		}
		if strings.Contains(err.Error(), testToken) || strings.Contains(fmt.Sprintf("%#v", err), testToken) {
			t.Errorf("error shows the token: %v", err)
		}
		if strings.Contains(log.String(), testToken) {
			t.Errorf("log shows the token: %s", log.String())
		}
		if hub, _ := f.auth(); hub[0] != "Bearer "+testToken {
			t.Errorf("hub got Authorization %q", hub[0])
		}
	})
}

func TestHubDownloadNotFound(t *testing.T) {
	isolateHF(t)
	f := newFakeHub(t)
	c, cache := f.client(t)
	ctx := context.Background()
	for _, tc := range []struct{ repo, path, rev, says string }{
		{"acme/nope", "onnx/model.onnx", "main", "repository not found"},
		{testRepo, "onnx/model.onnx", "no-such-branch", "revision not found"},
		{testRepo, "onnx/missing.onnx", "main", "file not found"},
	} {
		_, err := c.Download(ctx, tc.repo, tc.path, tc.rev, "")
		if !errors.Is(err, ErrHubNotFound) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s/%s@%s: err = %v, want %q", tc.repo, tc.path, tc.rev, err, tc.says)
		}
	}
	if l := leftovers(t, cache); len(l) != 0 {
		t.Errorf("files left: %v", l)
	}
}

func TestHubDownloadRedirectToCDNDropsAuthorization(t *testing.T) {
	isolateHF(t)
	f := newFakeHub(t)
	f.token = testToken
	f.renamed = "acme/old-name"
	c, _ := f.client(t)
	c.Token = testToken
	model := f.files["onnx/model.onnx"].content
	// The old name answers with a relative redirect (renamed repository): followed
	// with the token, then the LFS redirect to the CDN host: followed without it.
	p, err := c.Download(context.Background(), "acme/old-name", "onnx/model.onnx", "main", sha256Of(model))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, model) {
		t.Errorf("wrong content")
	}
	hub, cdn := f.auth()
	if len(hub) != 2 || hub[0] != "Bearer "+testToken || hub[1] != "Bearer "+testToken {
		t.Errorf("hub Authorization headers %q, want the token on both hub requests", hub)
	}
	if len(cdn) != 1 || cdn[0] != "" {
		t.Errorf("CDN Authorization headers %q, want none", cdn)
	}
}

func TestHubTokenSources(t *testing.T) {
	ctx := context.Background()
	model := []byte(`{"model_type":"bert"}`)
	run := func(t *testing.T) {
		f := newFakeHub(t)
		f.token = testToken
		c, _ := f.client(t)
		if _, err := c.Download(ctx, testRepo, "config.json", "main", sha256Of(model)); err != nil {
			t.Fatal(err)
		}
		if hub, _ := f.auth(); hub[0] != "Bearer "+testToken {
			t.Errorf("Authorization %q", hub[0])
		}
	}
	t.Run("HF_TOKEN", func(t *testing.T) {
		isolateHF(t)
		t.Setenv("HF_TOKEN", testToken)
		if tok, where := HubToken(); tok != testToken || where != "$HF_TOKEN" {
			t.Errorf("HubToken() = %q, %q", tok, where)
		}
		run(t)
	})
	t.Run("HF_HOME/token", func(t *testing.T) {
		home := isolateHF(t)
		if err := os.WriteFile(filepath.Join(home, "token"), []byte(testToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if tok, where := HubToken(); tok != testToken || where != filepath.Join(home, "token") {
			t.Errorf("HubToken() = %q, %q", tok, where)
		}
		run(t)
	})
	t.Run("~/.cache/huggingface/token", func(t *testing.T) {
		isolateHF(t)
		t.Setenv("HF_HOME", "")
		home := t.TempDir()
		t.Setenv("HOME", home)
		p := filepath.Join(home, ".cache", "huggingface", "token")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(testToken), 0o600); err != nil {
			t.Fatal(err)
		}
		if tok, where := HubToken(); tok != testToken || where != p {
			t.Errorf("HubToken() = %q, %q", tok, where)
		}
		run(t)
	})
	t.Run("HF_TOKEN wins over the file", func(t *testing.T) {
		home := isolateHF(t)
		os.WriteFile(filepath.Join(home, "token"), []byte("hf_fromfile"), 0o600)
		t.Setenv("HF_TOKEN", testToken)
		if tok, _ := HubToken(); tok != testToken {
			t.Errorf("HubToken() = %q", tok)
		}
	})
}

func TestHubDownloadCommitRevisionWritesNoRef(t *testing.T) {
	isolateHF(t)
	f := newFakeHub(t)
	c, cache := f.client(t)
	cfg := f.files["config.json"].content
	p, err := c.Download(context.Background(), testRepo, "config.json", testCommit, sha256Of(cfg))
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(cache, "models--acme--tiny-model")
	if want := filepath.Join(repoDir, "snapshots", testCommit, "config.json"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	if _, err := os.Stat(filepath.Join(repoDir, "refs")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refs/ written for a commit revision: %v", err)
	}
}

func TestHubDownloadNetworkFailure(t *testing.T) {
	isolateHF(t)
	t.Setenv("HF_TOKEN", testToken)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c := &HubClient{Endpoint: dead.URL, CacheDir: t.TempDir()}
	_, err := c.Download(context.Background(), testRepo, "onnx/model.onnx", testCommit, "")
	if !errors.Is(err, ErrHubNetwork) {
		t.Fatalf("err = %v, want a network error", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, dead.URL+"/"+testRepo+"/resolve/"+testCommit+"/onnx/model.onnx") || !strings.Contains(msg, "fixture") {
		t.Errorf("message should name the URL and the fixture way out: %s", msg)
	}
	if strings.Contains(msg, testToken) {
		t.Errorf("message shows the token: %s", msg)
	}
}

func TestHubDownloadOfflineAndFallback(t *testing.T) {
	isolateHF(t)
	f := newFakeHub(t)
	c, _ := f.client(t)
	ctx := context.Background()

	t.Setenv("HF_HUB_OFFLINE", "1")
	if _, err := c.Download(ctx, testRepo, "config.json", "main", ""); !errors.Is(err, ErrHubOffline) {
		t.Fatalf("offline, not cached: err = %v", err)
	}
	if f.hubReqs.Load() != 0 {
		t.Fatalf("HF_HUB_OFFLINE made a request")
	}
	t.Setenv("HF_HUB_OFFLINE", "")
	p, err := c.Download(ctx, testRepo, "config.json", "main", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	if q, err := c.Download(ctx, testRepo, "config.json", "main", ""); err != nil || q != p {
		t.Fatalf("offline, cached: %s, %v", q, err)
	}
	// Hub down: an unpinned branch falls back to what refs/ recorded, as huggingface_hub does.
	t.Setenv("HF_HUB_OFFLINE", "")
	f.hub.Close()
	if q, err := c.Download(ctx, testRepo, "config.json", "main", ""); err != nil || q != p {
		t.Fatalf("hub down, cached: %s, %v", q, err)
	}
}

func TestHubDownloadRejectsBadArguments(t *testing.T) {
	isolateHF(t)
	c := &HubClient{Endpoint: "http://127.0.0.1:1", CacheDir: t.TempDir()}
	for _, tc := range [][3]string{
		{"acme", "m.onnx", "main"},
		{"acme/m", "../../etc/passwd", "main"},
		{"acme/m", "/abs.onnx", "main"},
		{"acme/m", "a/./b.onnx", "main"},
		{"acme/m", "m.onnx", "../x"},
		{"a--b/m", "m.onnx", "main"},
	} {
		if _, err := c.Download(context.Background(), tc[0], tc[1], tc[2], ""); err == nil || errors.Is(err, ErrHubNetwork) {
			t.Errorf("%v: err = %v, want it refused before any request", tc, err)
		}
	}
}

func TestHubDownloadRejectsUnsafeEtag(t *testing.T) {
	isolateHF(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Repo-Commit", testCommit)
		w.Header().Set("ETag", `"../../../evil"`)
		w.Write([]byte("x"))
	}))
	defer srv.Close()
	cache := t.TempDir()
	c := &HubClient{Endpoint: srv.URL, CacheDir: cache}
	if _, err := c.Download(context.Background(), testRepo, "config.json", "main", ""); err == nil || !strings.Contains(err.Error(), "ETag") {
		t.Fatalf("err = %v, want the etag refused", err)
	}
	if l := leftovers(t, cache); len(l) != 0 {
		t.Errorf("files written: %v", l)
	}
}

func TestHubRedactedError(t *testing.T) {
	base := &HubError{Source: "hf:a/b/c@main", Kind: ErrHubAuth, Msg: "server said Bearer " + testToken}
	err := error(&redactedError{err: base, token: testToken})
	if strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "[HF_TOKEN]") {
		t.Errorf("not redacted: %s", err)
	}
	if !errors.Is(err, ErrHubAuth) {
		t.Errorf("redaction lost the error kind")
	}
}

func TestHubDownloadConcurrent(t *testing.T) {
	isolateHF(t)
	f := newFakeHub(t)
	c, cache := f.client(t)
	model := f.files["onnx/model.onnx"].content
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := c.Download(context.Background(), testRepo, "onnx/model.onnx", "main", sha256Of(model))
			if err == nil {
				if b, rerr := os.ReadFile(p); rerr != nil || !bytes.Equal(b, model) {
					err = fmt.Errorf("bad content at %s: %v", p, rerr)
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, p := range leftovers(t, cache) {
		if strings.HasSuffix(p, ".incomplete") || strings.Contains(p, ".tmp") || strings.Contains(p, ".link") {
			t.Errorf("leftover %s", p)
		}
	}
}
