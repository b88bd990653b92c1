package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// HubClient downloads single files from the Hugging Face hub into the hub's own
// cache layout, the one huggingface_hub's hf_hub_download writes and reads:
//
//	<CacheDir>/models--ORG--REPO/
//	    blobs/<etag>                      the content (etag: sha256 for LFS files, git sha1 otherwise)
//	    snapshots/<commit>/<path>         relative symlink to ../../blobs/<etag>
//	    refs/<revision>                   the commit a branch or tag resolved to
//
// so a file fetched here is found by Python tools and the other way round. The zero
// value is ready to use; empty fields take their defaults when Download runs.
type HubClient struct {
	// Endpoint is the hub's base URL: $HF_ENDPOINT, else https://huggingface.co.
	Endpoint string
	// Token is sent as "Authorization: Bearer" to the endpoint's own host only:
	// $HF_TOKEN, else the token file ($HF_TOKEN_PATH, else $HF_HOME/token, else
	// ~/.cache/huggingface/token). It never appears in an error or in Log.
	Token string
	// HTTP does the requests; http.DefaultClient's settings by default. Its
	// CheckRedirect is not used: Download follows redirects itself.
	HTTP *http.Client
	// CacheDir is the hub cache: HubCacheDir() by default.
	CacheDir string
	// Log, if set, gets one line per download (URLs without tokens or query strings).
	Log io.Writer
}

// Hub response headers (huggingface_hub constants.py).
const (
	headerRepoCommit = "X-Repo-Commit"
	headerLinkedEtag = "X-Linked-Etag"
	headerLinkedSize = "X-Linked-Size"
	headerErrorCode  = "X-Error-Code"
)

const maxRedirects = 10

// Errors Download returns, wrapped in a *HubError; test them with errors.Is.
var (
	ErrHubAuth     = errors.New("access denied")
	ErrHubNotFound = errors.New("not found")
	ErrHubNetwork  = errors.New("hub unreachable")
	ErrHubChecksum = errors.New("sha256 mismatch")
	ErrHubOffline  = errors.New("HF_HUB_OFFLINE is set and the file is not in the cache")
)

// HubError is what Download fails with.
type HubError struct {
	Source string // hf:ORG/REPO/PATH@REV
	URL    string // the URL involved, without query string; never holds the token
	Status int    // HTTP status, 0 when there was no response
	Kind   error  // one of the ErrHub* values, or nil
	Msg    string
	Err    error // underlying error, if any
}

func (e *HubError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *HubError) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// redactedError hides the token in an error's text while keeping errors.Is/As working.
type redactedError struct {
	err   error
	token string
}

func (r *redactedError) Error() string {
	return strings.ReplaceAll(r.err.Error(), r.token, "[HF_TOKEN]")
}
func (r *redactedError) Unwrap() error { return r.err }

var (
	commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// etags name blob files, so nothing that could climb out of blobs/.
	safeEtag = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// HubEndpoint is $HF_ENDPOINT, else https://huggingface.co, without a trailing slash.
func HubEndpoint() string {
	if e := os.Getenv("HF_ENDPOINT"); e != "" {
		return strings.TrimRight(e, "/")
	}
	return "https://huggingface.co"
}

// hfHome is $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
func hfHome() string {
	if d := os.Getenv("HF_HOME"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return filepath.Join(home, ".cache", "huggingface")
}

// HubTokenPath is the file huggingface_hub keeps the login token in:
// $HF_TOKEN_PATH, else $HF_HOME/token.
func HubTokenPath() string {
	if p := os.Getenv("HF_TOKEN_PATH"); p != "" {
		return p
	}
	return filepath.Join(hfHome(), "token")
}

// HubToken finds a token as huggingface_hub does: $HF_TOKEN (or the legacy
// $HUGGING_FACE_HUB_TOKEN), else the token file. where says which, for messages;
// token is "" when there is none.
func HubToken() (token, where string) {
	for _, env := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if t := strings.TrimSpace(os.Getenv(env)); t != "" {
			return t, "$" + env
		}
	}
	p := HubTokenPath()
	if b, err := os.ReadFile(p); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, p
		}
	}
	return "", ""
}

func hubOffline() bool {
	for _, env := range []string{"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"} {
		switch strings.ToUpper(os.Getenv(env)) {
		case "1", "ON", "YES", "TRUE":
			return true
		}
	}
	return false
}

// RepoCacheDir is the repository's folder in the hub cache: models--ORG--REPO.
func (c *HubClient) RepoCacheDir(repo string) string {
	return filepath.Join(c.cacheDir(), "models--"+strings.ReplaceAll(repo, "/", "--"))
}

func (c *HubClient) cacheDir() string {
	if c.CacheDir != "" {
		return c.CacheDir
	}
	return HubCacheDir()
}

func (c *HubClient) endpoint() string {
	if c.Endpoint != "" {
		return strings.TrimRight(c.Endpoint, "/")
	}
	return HubEndpoint()
}

func (c *HubClient) token() (string, string) {
	if c.Token != "" {
		return c.Token, "HubClient.Token"
	}
	return HubToken()
}

// Cached is the snapshot path of repo/path at revision when the cache holds it,
// resolving a branch or tag through refs/ as huggingface_hub's
// try_to_load_from_cache does. It makes no request.
func (c *HubClient) Cached(repo, filePath, revision string) (string, bool) {
	if checkHubArgs(repo, filePath, revision) != nil {
		return "", false
	}
	dir := c.RepoCacheDir(repo)
	commit := revision
	if !commitHash.MatchString(revision) {
		b, err := os.ReadFile(filepath.Join(dir, "refs", filepath.FromSlash(revision)))
		if err != nil {
			return "", false
		}
		commit = strings.TrimSpace(string(b))
		if !commitHash.MatchString(commit) {
			return "", false
		}
	}
	p := filepath.Join(dir, "snapshots", commit, filepath.FromSlash(filePath))
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return p, true
}

func checkHubArgs(repo, filePath, revision string) error {
	parts := strings.Split(repo, "/")
	if len(parts) != 2 || !validName(parts[0]) || !validName(parts[1]) {
		return fmt.Errorf("repository %q is not ORG/NAME", repo)
	}
	if filePath == "" || strings.HasPrefix(filePath, "/") || strings.Contains(filePath, "\\") || path.Clean(filePath) != filePath || strings.HasPrefix(filePath, "../") || filePath == ".." {
		return fmt.Errorf("file path %q is not a clean relative path", filePath)
	}
	if revision == "" || strings.HasPrefix(revision, "/") || path.Clean(revision) != revision || strings.HasPrefix(revision, "..") || strings.Contains(revision, "\\") {
		return fmt.Errorf("revision %q is not a branch, tag or commit", revision)
	}
	return nil
}

func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\") && !strings.Contains(s, "--")
}

// Download makes repo/filePath at revision present in the hub cache and returns its
// snapshot path (snapshots/<commit>/<path>, a symlink to the blob).
//
// A cached file is returned without any request when revision is a commit hash, or
// when it is a branch or tag already recorded in refs/ and wantSHA256 is given and
// matches (a pinned file cannot go stale). Otherwise it GETs
// {endpoint}/{repo}/resolve/{revision}/{path}, takes the commit from X-Repo-Commit and
// the blob name from X-Linked-Etag or ETag (LFS files answer with a redirect to a
// CDN: the token is not sent to another host), streams the body into
// blobs/<etag>.incomplete, checks it (the pinned wantSHA256, and the etag too when it
// is an LFS sha256), then renames it into place, links the snapshot and writes
// refs/<revision>. A file that fails a check is deleted.
func (c *HubClient) Download(ctx context.Context, repo, filePath, revision, wantSHA256 string) (string, error) {
	tok, _ := c.token()
	p, err := c.download(ctx, repo, filePath, revision, strings.ToLower(wantSHA256))
	if err != nil && tok != "" && strings.Contains(err.Error(), tok) {
		err = &redactedError{err: err, token: tok}
	}
	return p, err
}

func (c *HubClient) download(ctx context.Context, repo, filePath, revision, want string) (string, error) {
	src := "hf:" + repo + "/" + filePath + "@" + revision
	fail := func(kind error, msg string, err error) error {
		return &HubError{Source: src, Kind: kind, Msg: msg, Err: err}
	}
	if err := checkHubArgs(repo, filePath, revision); err != nil {
		return "", fail(nil, "bad source", err)
	}
	if want != "" && !sha256Hex.MatchString(want) {
		return "", fail(nil, fmt.Sprintf("pinned sha256 %q is not 64 hex digits", want), nil)
	}

	// 1. The cache, without a request.
	cached, haveCached := c.Cached(repo, filePath, revision)
	if haveCached {
		if want == "" {
			if commitHash.MatchString(revision) {
				return cached, nil
			}
		} else if got, err := fileSum(cached); err == nil && got == want {
			return cached, nil
		} else if err == nil {
			c.logf("%s: cached file %s has sha256 %s, the catalog pins %s: downloading it again", src, cached, got, want)
			haveCached = false
		}
	}
	if hubOffline() {
		if haveCached {
			return cached, nil
		}
		return "", fail(ErrHubOffline, fmt.Sprintf("not in the cache %s, and HF_HUB_OFFLINE forbids downloading it", c.RepoCacheDir(repo)), nil)
	}

	// 2. Ask the hub.
	res, err := c.resolve(ctx, src, repo, filePath, revision)
	if err != nil {
		var he *HubError
		if haveCached && errors.As(err, &he) && errors.Is(he.Kind, ErrHubNetwork) {
			// huggingface_hub falls back to the cached file of a branch when offline.
			c.logf("%s: %v; using the cached %s", src, err, cached)
			return cached, nil
		}
		return "", err
	}
	if res.body != nil {
		defer res.body.Close()
	}

	dir := c.RepoCacheDir(repo)
	blob := filepath.Join(dir, "blobs", res.etag)
	pointer := filepath.Join(dir, "snapshots", res.commit, filepath.FromSlash(filePath))
	lfs := sha256Hex.MatchString(res.etag)
	if want != "" && lfs && res.etag != want {
		return "", fail(ErrHubChecksum, fmt.Sprintf("the hub serves sha256 %s (LFS etag) at %s, the catalog pins %s: refusing to download it", res.etag, revision, want), nil)
	}

	// 3. The blob may already be there (same file at another revision).
	if st, err := os.Stat(blob); err == nil && st.Mode().IsRegular() {
		ok := true
		if want != "" {
			got, err := fileSum(blob)
			ok = err == nil && got == want
		}
		if ok {
			if err := c.finish(dir, blob, pointer, revision, res.commit); err != nil {
				return "", fail(nil, "caching", err)
			}
			return pointer, nil
		}
		c.logf("%s: cached blob %s does not match the pinned sha256: downloading it again", src, blob)
	}

	// 4. Download it (following the CDN redirect when the hub gave one).
	if res.body == nil {
		if err := c.fetchBody(ctx, src, res); err != nil {
			return "", err
		}
		defer res.body.Close()
	}
	if err := c.writeBlob(ctx, src, res, blob, want, lfs); err != nil {
		return "", err
	}
	if err := c.finish(dir, blob, pointer, revision, res.commit); err != nil {
		return "", fail(nil, "caching", err)
	}
	return pointer, nil
}

// resolved is what the hub said about a file.
type resolved struct {
	commit, etag string
	size         int64 // -1 when unknown
	next         *url.URL
	origin       *url.URL
	body         io.ReadCloser // set when the hub answered 200 itself
	lastURL      string
}

func (c *HubClient) client() *http.Client {
	var hc http.Client
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

// get does one request, with the token only for the hub's own scheme and host.
func (c *HubClient) get(ctx context.Context, u, origin *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "hwtest (huggingface_hub-compatible cache; go)")
	if tok, _ := c.token(); tok != "" && sameOrigin(u, origin) {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return c.client().Do(req)
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// cleanURL drops the query and fragment (CDN signatures) and any user info.
func cleanURL(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment, v.RawFragment, v.User = "", "", "", nil
	return v.String()
}

func (c *HubClient) resolveURL(repo, filePath, revision string) (*url.URL, error) {
	segs := strings.Split(filePath, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return url.Parse(c.endpoint() + "/" + repo + "/resolve/" + url.PathEscape(revision) + "/" + strings.Join(segs, "/"))
}

// resolve GETs the resolve URL, following the hub's own redirects (renamed repos)
// until a response carries X-Repo-Commit. It stops there: either the content (a
// 200, body kept open) or a redirect to the CDN (next), not yet followed.
func (c *HubClient) resolve(ctx context.Context, src, repo, filePath, revision string) (*resolved, error) {
	u, err := c.resolveURL(repo, filePath, revision)
	if err != nil {
		return nil, &HubError{Source: src, Msg: "bad endpoint " + c.endpoint(), Err: err}
	}
	origin := u
	for hop := 0; ; hop++ {
		if hop > maxRedirects {
			return nil, &HubError{Source: src, URL: cleanURL(u), Msg: "too many redirects at " + cleanURL(u)}
		}
		c.logf("%s: GET %s", src, cleanURL(u))
		resp, err := c.get(ctx, u, origin)
		if err != nil {
			return nil, c.networkError(src, u, err)
		}
		next, isRedirect, err := location(resp, u)
		if err != nil {
			resp.Body.Close()
			return nil, &HubError{Source: src, URL: cleanURL(u), Status: resp.StatusCode, Msg: "bad redirect from " + cleanURL(u), Err: err}
		}
		commit := strings.TrimSpace(resp.Header.Get(headerRepoCommit))
		if !isRedirect && resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, c.statusError(src, u, origin, resp)
		}
		if commit == "" && isRedirect {
			// A relative or same-host redirect before the hub named a commit: a
			// renamed repository. Follow it (with the token: same host).
			resp.Body.Close()
			u = next
			continue
		}
		r := &resolved{commit: commit, size: -1, origin: origin, lastURL: cleanURL(u)}
		if r.commit == "" && commitHash.MatchString(revision) {
			r.commit = revision
		}
		if !commitHash.MatchString(r.commit) {
			resp.Body.Close()
			return nil, &HubError{Source: src, URL: cleanURL(u), Msg: fmt.Sprintf("%s answered without a valid %s header (got %q): is %s a Hugging Face hub?", cleanURL(u), headerRepoCommit, commit, u.Host)}
		}
		r.etag = normalizeEtag(resp.Header.Get(headerLinkedEtag))
		if r.etag == "" {
			r.etag = normalizeEtag(resp.Header.Get("ETag"))
		}
		if !safeEtag.MatchString(r.etag) {
			resp.Body.Close()
			return nil, &HubError{Source: src, URL: cleanURL(u), Msg: fmt.Sprintf("%s answered without a usable ETag (got %q): cannot name the blob", cleanURL(u), r.etag)}
		}
		if n, err := strconv.ParseInt(resp.Header.Get(headerLinkedSize), 10, 64); err == nil && n >= 0 {
			r.size = n
		} else if !isRedirect && resp.ContentLength >= 0 && resp.Header.Get("Content-Encoding") == "" {
			r.size = resp.ContentLength
		}
		if isRedirect {
			resp.Body.Close()
			r.next = next
		} else {
			r.body = resp.Body
		}
		return r, nil
	}
}

// fetchBody follows the redirect resolve stopped at (the CDN) to the content.
func (c *HubClient) fetchBody(ctx context.Context, src string, r *resolved) error {
	u := r.next
	for hop := 0; ; hop++ {
		if hop > maxRedirects {
			return &HubError{Source: src, URL: cleanURL(u), Msg: "too many redirects at " + cleanURL(u)}
		}
		c.logf("%s: GET %s", src, cleanURL(u))
		resp, err := c.get(ctx, u, r.origin)
		if err != nil {
			return c.networkError(src, u, err)
		}
		next, isRedirect, err := location(resp, u)
		if err != nil {
			resp.Body.Close()
			return &HubError{Source: src, URL: cleanURL(u), Status: resp.StatusCode, Msg: "bad redirect from " + cleanURL(u), Err: err}
		}
		if isRedirect {
			resp.Body.Close()
			u = next
			continue
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return c.statusError(src, u, r.origin, resp)
		}
		r.body, r.lastURL = resp.Body, cleanURL(u)
		if r.size < 0 && resp.ContentLength >= 0 && resp.Header.Get("Content-Encoding") == "" {
			r.size = resp.ContentLength
		}
		return nil
	}
}

func location(resp *http.Response, base *url.URL) (*url.URL, bool, error) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil, false, nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, false, errors.New("redirect without Location")
	}
	next, err := base.Parse(loc)
	if err != nil {
		return nil, false, err
	}
	if next.Scheme != "http" && next.Scheme != "https" {
		return nil, false, fmt.Errorf("redirect to unsupported scheme %q", next.Scheme)
	}
	return next, true, nil
}

// normalizeEtag strips the weak marker and quotes, as huggingface_hub's _normalize_etag.
func normalizeEtag(e string) string {
	e = strings.TrimSpace(e)
	e = strings.TrimPrefix(e, "W/")
	return strings.Trim(e, `"`)
}

func (c *HubClient) networkError(src string, u *url.URL, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &HubError{Source: src, URL: cleanURL(u), Msg: "download of " + cleanURL(u) + " interrupted", Err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // url.Error repeats the full URL, query string included
	}
	return &HubError{
		Source: src, URL: cleanURL(u), Kind: ErrHubNetwork,
		Msg: fmt.Sprintf("cannot reach %s (no network here, or set HF_ENDPOINT to a mirror); "+
			"no network is needed for a model with a fixture: run it offline with its fixture, "+
			"or put the file in the hub cache %s", cleanURL(u), c.cacheDir()),
		Err: err,
	}
}

func (c *HubClient) statusError(src string, u, origin *url.URL, resp *http.Response) error {
	e := &HubError{Source: src, URL: cleanURL(u), Status: resp.StatusCode}
	code := resp.Header.Get(headerErrorCode)
	status := fmt.Sprintf("HTTP %d from %s", resp.StatusCode, cleanURL(u))
	if code != "" {
		status += " (" + headerErrorCode + ": " + code + ")"
	}
	_, where := c.token()
	hub := sameOrigin(u, origin)
	switch {
	case hub && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden || code == "GatedRepo"):
		e.Kind = ErrHubAuth
		if where == "" {
			e.Msg = status + ": the repository is gated or private (or does not exist): " +
				"set HF_TOKEN (or log in with `hf auth login`) to a token that has access, and accept the model's terms on its hub page if it is gated"
		} else {
			e.Msg = status + ": the token from " + where + " was refused: the repository is gated or private (or does not exist); " +
				"set HF_TOKEN to a token that has access, and accept the model's terms on its hub page if it is gated"
		}
	case resp.StatusCode == http.StatusNotFound:
		e.Kind = ErrHubNotFound
		switch code {
		case "RepoNotFound":
			e.Msg = status + ": repository not found (a private repository also reads as missing without HF_TOKEN)"
		case "RevisionNotFound":
			e.Msg = status + ": revision not found in the repository"
		case "EntryNotFound":
			e.Msg = status + ": file not found in the repository at this revision"
		default:
			e.Msg = status + ": repository, revision or file not found"
		}
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Msg = status + ": rate limited by the hub; retry later (a token via HF_TOKEN raises the limit)"
	case !hub && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		e.Kind = ErrHubAuth
		e.Msg = status + ": the download server refused the redirected request (expired signed URL?); retry"
	default:
		e.Msg = status
	}
	return e
}

// writeBlob streams the body to blob.incomplete, checks it and renames it to blob.
func (c *HubClient) writeBlob(ctx context.Context, src string, r *resolved, blob, want string, lfs bool) error {
	fail := func(kind error, msg string, err error) error {
		return &HubError{Source: src, URL: r.lastURL, Kind: kind, Msg: msg, Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return fail(nil, "caching", err)
	}
	tmp := blob + ".incomplete"
	f, err := createIncomplete(ctx, tmp, blob)
	if errors.Is(err, errBlobAppeared) {
		// Another process finished the same blob while we waited.
		if want != "" {
			if got, err := fileSum(blob); err != nil || got != want {
				return fail(ErrHubChecksum, fmt.Sprintf("blob %s written by another process has sha256 %s, the catalog pins %s", blob, got, want), err)
			}
		}
		return nil
	}
	if err != nil {
		return fail(nil, "caching", err)
	}
	c.logf("%s: downloading %s to %s", src, r.lastURL, blob)
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r.body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		if ctx.Err() != nil {
			return fail(nil, "download of "+r.lastURL+" interrupted", ctx.Err())
		}
		return fail(ErrHubNetwork, "downloading "+r.lastURL, err)
	}
	if r.size >= 0 && n != r.size {
		os.Remove(tmp)
		return fail(nil, fmt.Sprintf("downloaded %d bytes from %s, the hub announced %d", n, r.lastURL, r.size), nil)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if lfs && got != r.etag {
		os.Remove(tmp)
		return fail(ErrHubChecksum, fmt.Sprintf("downloaded content has sha256 %s but the hub's LFS etag says %s: corrupted transfer, deleted it", got, r.etag), nil)
	}
	if want != "" && got != want {
		os.Remove(tmp)
		return fail(ErrHubChecksum, fmt.Sprintf("downloaded content has sha256 %s, the catalog pins %s: deleted it", got, want), nil)
	}
	if err := os.Rename(tmp, blob); err != nil {
		os.Remove(tmp)
		return fail(nil, "caching", err)
	}
	return nil
}

var errBlobAppeared = errors.New("blob appeared")

// staleIncomplete is how long an untouched .incomplete file is taken to be left over
// from a dead process rather than a download in progress.
var staleIncomplete = 2 * time.Minute

// createIncomplete creates tmp exclusively. If another download holds it, it waits
// until that one finishes (blob appears: errBlobAppeared), gives up (tmp vanishes:
// retry), or stalls (tmp untouched for staleIncomplete: take it over).
func createIncomplete(ctx context.Context, tmp, blob string) (*os.File, error) {
	for {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if st, err := os.Stat(tmp); err == nil && time.Since(st.ModTime()) > staleIncomplete {
			os.Remove(tmp)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if _, err := os.Stat(blob); err == nil {
			if _, err := os.Stat(tmp); errors.Is(err, fs.ErrNotExist) {
				return nil, errBlobAppeared
			}
		}
	}
}

// finish links snapshots/<commit>/<path> to the blob and records refs/<revision>.
func (c *HubClient) finish(dir, blob, pointer, revision, commit string) error {
	if err := os.MkdirAll(filepath.Dir(pointer), 0o755); err != nil {
		return err
	}
	if err := linkBlob(blob, pointer); err != nil {
		return err
	}
	if revision != commit {
		ref := filepath.Join(dir, "refs", filepath.FromSlash(revision))
		if b, err := os.ReadFile(ref); err != nil || string(b) != commit {
			if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
				return err
			}
			tmp := tmpName(ref)
			if err := os.WriteFile(tmp, []byte(commit), 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp, ref); err != nil {
				os.Remove(tmp)
				return err
			}
		}
	}
	return nil
}

// linkBlob points pointer at blob with a relative symlink (../../blobs/<etag>), as
// huggingface_hub's _create_symlink; where symlinks fail it copies the blob.
func linkBlob(blob, pointer string) error {
	rel, err := filepath.Rel(filepath.Dir(pointer), blob)
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(pointer); err == nil && cur == rel {
		return nil
	}
	tmp := tmpName(pointer)
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err == nil {
		if err := os.Rename(tmp, pointer); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}
	data, err := os.ReadFile(blob)
	if err != nil {
		return err
	}
	return WriteAtomic(pointer, data)
}

var tmpSeq atomic.Uint64

// tmpName is a name next to p that no other writer, in this process or another, uses.
func tmpName(p string) string {
	return fmt.Sprintf("%s.%d-%d.tmp", p, os.Getpid(), tmpSeq.Add(1))
}

func (c *HubClient) logf(format string, args ...any) {
	if c.Log == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if tok, _ := c.token(); tok != "" {
		msg = strings.ReplaceAll(msg, tok, "[HF_TOKEN]")
	}
	fmt.Fprintln(c.Log, msg)
}
