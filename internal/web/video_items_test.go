package web_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
)

// videoFixtures are avfile's test videos and the MIME type each must be
// stored (and served) as.
var videoFixtures = []struct{ file, mime string }{
	{"clip.mp4", "video/mp4"},
	{"clip.webm", "video/webm"},
	{"clip-stream.webm", "video/webm"},
}

// Videos upload as files and inside a zip (issue 29): each is stored as a
// video item with the MIME type its content was probed as, and the study
// page shows it muted, its first frame only loaded.
func TestUploadVideosAsFilesAndZip(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	files := a.study("videos", 0, 3, "draft")
	zipped := a.study("zipped", 0, 3, "draft")
	c := a.admin()
	var parts [][2]string
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	var want, zwant strings.Builder
	for _, f := range videoFixtures[:2] {
		data := soundFixture(t, f.file)
		parts = append(parts, [2]string{f.file, data})
		fmt.Fprintf(&want, "%s video %s %d\n", f.file, f.mime, len(data))
		w, _ := zw.Create("set/" + f.file)
		w.Write([]byte(data))
		fmt.Fprintf(&zwant, "set/%s video %s %d\n", f.file, f.mime, len(data))
	}
	zw.Close()
	res := upload(t, a, c, "videos", parts)
	if res.StatusCode != 200 || !strings.Contains(res.body, "2 added") {
		t.Fatalf("upload: %d %s", res.StatusCode, res.body)
	}
	if got := a.storedItems(files.ID); got != want.String() {
		t.Errorf("stored:\n%s\nwant:\n%s", got, want.String())
	}
	if n := strings.Count(res.body, `<video controls muted playsinline preload="metadata" src="/img/`); n != 2 {
		t.Errorf("%d videos on the study page, want 2", n)
	}
	res = upload(t, a, c, "zipped", [][2]string{{"videos.zip", zbuf.String()}})
	if res.StatusCode != 200 || !strings.Contains(res.body, "2 added") {
		t.Fatalf("zip upload: %d %s", res.StatusCode, res.body)
	}
	if got, w := a.storedItems(zipped.ID), sortedLines(zwant.String()); got != w {
		t.Errorf("stored from the zip:\n%s\nwant:\n%s", got, w)
	}
	// The picture's size is the probe's.
	var w, h int
	if err := a.pool.QueryRow(t.Context(), `SELECT width, height FROM items WHERE study_id = $1 AND file_name = 'clip.mp4'`, files.ID).Scan(&w, &h); err != nil || w != 64 || h != 48 {
		t.Errorf("clip.mp4 stored as %d×%d (%v), want 64×48", w, h, err)
	}
}

// A file named as a video whose content is not one (a PNG named .mp4, a
// sound named .webm) is refused with the probe's reason, a sound into a
// study of videos is refused whole, and nothing of them is stored.
func TestUploadVideoRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("refused", 0, 3, "draft")
	c := a.admin()
	png := string(demo.Items()[0].Data)
	res := upload(t, a, c, "refused", [][2]string{
		{"picture.mp4", png},
		{"tone.webm", soundFixture(t, "tone-opus.ogg")},
		{"sound.mp4", soundFixture(t, "tone.m4a")},
		{"ok.mp4", soundFixture(t, "clip.mp4")},
	})
	if res.StatusCode != 200 {
		t.Fatalf("upload: %d %s", res.StatusCode, res.body)
	}
	for _, want := range []string{
		"<strong>picture.mp4</strong>: not a video file closer accepts (MP4 or WebM): its content is image/png",
		"<strong>tone.webm</strong>: ",
		"<strong>sound.mp4</strong>: a sound (M4A), not a video: it has no picture track",
		"1 added, 3 rejected",
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("report lacks %q:\n%s", want, res.body)
		}
	}
	if got, want := a.storedItems(st.ID), fmt.Sprintf("ok.mp4 video video/mp4 %d\n", len(soundFixture(t, "clip.mp4"))); got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
	res = upload(t, a, c, "refused", [][2]string{{"b.wav", soundFixture(t, "tone.wav")}})
	if !strings.Contains(res.body, "this study&#39;s items are video items and these are audio items") {
		t.Errorf("a sound into a study of videos: %d %s", res.StatusCode, res.body)
	}
	if got := a.storedItems(st.ID); strings.Count(got, "\n") != 1 {
		t.Errorf("stored after the refusals:\n%s", got)
	}
}

// videoStudy creates an open study of the format whose items are the
// video fixtures, and returns their sha256 sums.
func (a *app) videoStudy(slug, format string) []string {
	a.t.Helper()
	st, err := a.store.CreateStudy(a.t.Context(), study.StudyInput{Slug: slug, Title: "Study " + slug, QuestionsPerParticipant: 3,
		Status: study.StatusOpen, Format: format})
	if err != nil {
		a.t.Fatal(err)
	}
	var ims []media.Image
	for _, f := range videoFixtures {
		data := soundFixture(a.t, f.file)
		info, err := avfile.ProbeVideo(strings.NewReader(data), int64(len(data)), avfile.DefaultVideo())
		if err != nil {
			a.t.Fatal(f.file, err)
		}
		im, err := media.Video(f.file, []byte(data), info.MIME, info.Width, info.Height)
		if err != nil {
			a.t.Fatal(err)
		}
		ims = append(ims, im)
	}
	if _, rej, err := a.store.AddItems(a.t.Context(), st.ID, ims); err != nil || len(rej) > 0 {
		a.t.Fatal(rej, err)
	}
	sums := make([]string, len(ims))
	for i, im := range ims {
		sums[i] = im.SHA256
	}
	return sums
}

// A video item is served by GET /img/{sha256} as its probed MIME type,
// with nosniff, and answers Range requests with 206 and the bytes asked.
func TestServeVideoWithRanges(t *testing.T) {
	t.Parallel()
	a, _, _ := imageApp(t, 0)
	sums := a.videoStudy("play", "triplet")
	c := a.client()
	for i, f := range videoFixtures {
		data := soundFixture(t, f.file)
		res := a.do(c, "GET", "/img/"+sums[i], nil, nil)
		if res.StatusCode != 200 || res.body != data || res.Header.Get("Content-Type") != f.mime ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: %d %q %q, %d bytes of %d", f.file, res.StatusCode, res.Header.Get("Content-Type"),
				res.Header.Get("X-Content-Type-Options"), len(res.body), len(data))
		}
		res = a.do(c, "GET", "/img/"+sums[i], nil, map[string]string{"Range": "bytes=100-199"})
		want := fmt.Sprintf("bytes 100-199/%d", len(data))
		if res.StatusCode != http.StatusPartialContent || res.body != data[100:200] || res.Header.Get("Content-Range") != want ||
			res.Header.Get("Content-Type") != f.mime {
			t.Errorf("%s Range: %d %q %q, %d bytes", f.file, res.StatusCode, res.Header.Get("Content-Range"), res.Header.Get("Content-Type"), len(res.body))
		}
	}
}

// The question page of a study of videos (issue 29), as a triplet and an
// odd-one-out:
// every item shown is a muted inline video of its /img/ URL, its first
// frame only loaded, never autoplayed, with a play button of the same URL
// (keys A, then S, D, F...); nothing is fetched ahead as an image.
func TestVideoQuestionPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	video := regexp.MustCompile(`<video class="item-video" muted playsinline preload="metadata" src="(/img/[0-9a-f]{64})"`)
	play := regexp.MustCompile(`<button type="button" class="play" data-src="(/img/[0-9a-f]{64})" data-play-key="([a-z])"`)
	for _, f := range []struct {
		format string
		keys   string
	}{{"triplet", "asd"}, {"odd-one-out", "sdf"}} { // rank needs more than the 3 fixture videos
		slug := "v-" + strings.ReplaceAll(f.format, ":", "-")
		a.videoStudy(slug, f.format)
		c := a.client()
		if res := a.do(c, "POST", "/s/"+slug+"/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: start %d", f.format, res.StatusCode)
		}
		page := a.do(c, "GET", "/s/"+slug+"/q", nil, nil)
		if page.StatusCode != http.StatusOK {
			t.Fatalf("%s: question page %d", f.format, page.StatusCode)
		}
		videos := video.FindAllStringSubmatch(page.body, -1)
		buttons := play.FindAllStringSubmatch(page.body, -1)
		if len(videos) != len(f.keys) || len(buttons) != len(f.keys) {
			t.Fatalf("%s: %d videos and %d play buttons, want %d:\n%s", f.format, len(videos), len(buttons), len(f.keys), page.body)
		}
		shown := map[string]bool{}
		for _, v := range videos {
			shown[v[1]] = true
			if res := a.do(c, "GET", v[1], nil, nil); res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "video/") {
				t.Errorf("%s: %s is %d %q", f.format, v[1], res.StatusCode, res.Header.Get("Content-Type"))
			}
		}
		keys := ""
		for _, b := range buttons {
			keys += b[2]
			if !shown[b[1]] {
				t.Errorf("%s: a play button of %s, which the page does not show", f.format, b[1])
			}
		}
		if keys != f.keys {
			t.Errorf("%s: play keys %q, want %q", f.format, keys, f.keys)
		}
		if strings.Contains(page.body, "autoplay") || strings.Contains(page.body, "<img src=\"/img/") || strings.Contains(page.body, `rel="prefetch"`) {
			t.Errorf("%s: the page plays by itself, or shows or fetches a video as an image:\n%s", f.format, page.body)
		}
	}
}
