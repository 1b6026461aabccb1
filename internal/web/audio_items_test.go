package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
)

// soundFixtures are avfile's test files of each accepted sound format and
// the MIME type each must be stored (and served) as.
var soundFixtures = []struct{ file, mime string }{
	{"tone.wav", "audio/wav"},
	{"tone.mp3", "audio/mpeg"},
	{"cbr128.mp3", "audio/mpeg"},
	{"tone-opus.ogg", "audio/ogg"},
	{"tone-vorbis.ogg", "audio/ogg"},
	{"tone.flac", "audio/flac"},
	{"tone.m4a", "audio/mp4"},
}

func soundFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "avfile", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// silentWAV is a WAV of 8-bit mono silence of rate samples a second
// lasting seconds.
func silentWAV(seconds, rate int) string {
	n := rate * seconds
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(rate), uint16(1), uint16(8)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(n))
	b.Write(bytes.Repeat([]byte{0x80}, n))
	return b.String()
}

// storedItems lists a study's items as stored: file name, kind, content
// type and byte count.
func (a *app) storedItems(studyID int64) string {
	a.t.Helper()
	rows, err := a.pool.Query(context.Background(), `SELECT file_name, kind, content_type, octet_length(data)
		FROM items WHERE study_id = $1 ORDER BY file_name`, studyID)
	if err != nil {
		a.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var name, kind, ct string
		var n int
		if err := rows.Scan(&name, &kind, &ct, &n); err != nil {
			a.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %s %d\n", name, kind, ct, n)
	}
	return b.String()
}

// Sounds upload as files and inside a zip (issue 29): each is stored as
// an audio item with the MIME type its content was probed as, whatever
// its name says, and the study page lists it as a player and its label.
func TestUploadSoundsAsFilesAndZip(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	files := a.study("sounds", 0, 3, "draft")
	zipped := a.study("zipped", 0, 3, "draft")
	c := a.admin()
	var parts [][2]string
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	var want strings.Builder
	var zwant strings.Builder
	for i, f := range soundFixtures {
		data := soundFixture(t, f.file)
		// A misleading name: the content decides.
		name := fmt.Sprintf("s%d-%s.bin", i, f.file)
		parts = append(parts, [2]string{name, data})
		fmt.Fprintf(&want, "%s audio %s %d\n", name, f.mime, len(data))
		w, _ := zw.Create("set/" + f.file)
		w.Write([]byte(data))
		fmt.Fprintf(&zwant, "set/%s audio %s %d\n", f.file, f.mime, len(data))
	}
	zw.Close()
	res := upload(t, a, c, "sounds", parts)
	if res.StatusCode != 200 || !strings.Contains(res.body, fmt.Sprintf("%d added", len(soundFixtures))) {
		t.Fatalf("upload: %d %s", res.StatusCode, res.body)
	}
	if got := a.storedItems(files.ID); got != want.String() {
		t.Errorf("stored:\n%s\nwant:\n%s", got, want.String())
	}
	if n := strings.Count(res.body, `<audio controls preload="none" src="/img/`); n != len(soundFixtures) {
		t.Errorf("%d players on the study page, want %d", n, len(soundFixtures))
	}
	if !strings.Contains(res.body, "s0-tone.wav") {
		t.Error("the study page lacks the label")
	}
	res = upload(t, a, c, "zipped", [][2]string{{"sounds.zip", zbuf.String()}})
	if res.StatusCode != 200 || !strings.Contains(res.body, fmt.Sprintf("%d added", len(soundFixtures))) {
		t.Fatalf("zip upload: %d %s", res.StatusCode, res.body)
	}
	// Files named alike: the order of the listing is by name.
	if got, w := a.storedItems(zipped.ID), sortedLines(zwant.String()); got != w {
		t.Errorf("stored from the zip:\n%s\nwant:\n%s", got, w)
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// A file named as a sound whose content is not one, a sound over the
// length limit and an image into a study of sounds are refused with the
// reason, and nothing of them is stored.
func TestUploadSoundRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("refused", 0, 3, "draft")
	c := a.admin()
	png := string(demo.Items()[0].Data)
	res := upload(t, a, c, "refused", [][2]string{
		{"picture.mp3", png},
		{"long.wav", silentWAV(31, 8000)},
		{"ok.wav", soundFixture(t, "tone.wav")},
	})
	if res.StatusCode != 200 {
		t.Fatalf("upload: %d %s", res.StatusCode, res.body)
	}
	for _, want := range []string{
		"<strong>picture.mp3</strong>: not a sound file closer accepts (WAV, MP3, Ogg (Opus or Vorbis), FLAC or M4A): its content is image/png",
		"<strong>long.wav</strong>: lasts 31 s, the study&#39;s limit is 30 s",
		"1 added, 2 rejected",
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("report lacks %q:\n%s", want, res.body)
		}
	}
	if got, want := a.storedItems(st.ID), fmt.Sprintf("ok.wav audio audio/wav %d\n", len(soundFixture(t, "tone.wav"))); got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
	// One kind per study: an image into a study of sounds is refused whole.
	res = upload(t, a, c, "refused", [][2]string{{"a.png", png}})
	if !strings.Contains(res.body, "this study&#39;s items are audio items and these are image items") {
		t.Errorf("an image into a study of sounds: %d %s", res.StatusCode, res.body)
	}
	// And an upload of both kinds into an empty study.
	mixed := a.study("mixed", 0, 3, "draft")
	res = upload(t, a, c, "mixed", [][2]string{{"a.png", png}, {"b.wav", soundFixture(t, "tone.wav")}})
	if !strings.Contains(res.body, "the upload holds 1 images, 1 sounds and 0 videos") {
		t.Errorf("images and sounds together: %d %s", res.StatusCode, res.body)
	}
	if got := a.storedItems(st.ID) + a.storedItems(mixed.ID); strings.Count(got, "\n") != 1 {
		t.Errorf("stored after the refusals:\n%s", got)
	}
}

// addSounds stores the fixtures as the audio items of a new study and
// returns their sha256 sums in the fixtures' order.
func addSounds(t *testing.T, a *app, slug string, files ...string) []string {
	t.Helper()
	st := a.study(slug, 0, 3, study.StatusDraft)
	var ims []media.Image
	for _, f := range files {
		data := soundFixture(t, f)
		info, err := avfile.ProbeAudio(strings.NewReader(data), int64(len(data)), avfile.DefaultAudio())
		if err != nil {
			t.Fatal(f, err)
		}
		im, err := media.Sound(f, []byte(data), info.MIME)
		if err != nil {
			t.Fatal(err)
		}
		ims = append(ims, im)
	}
	if _, rej, err := a.store.AddItems(t.Context(), st.ID, ims); err != nil || len(rej) > 0 {
		t.Fatal(rej, err)
	}
	sums := make([]string, len(ims))
	for i, im := range ims {
		sums[i] = im.SHA256
	}
	return sums
}

// A sound item is served by GET /img/{sha256} as its probed MIME type,
// with nosniff, and answers Range requests (206 and the bytes asked), so
// that a browser can seek; from the cache and streamed alike (streamed:
// whole responses only), with the policy allowing media from this server.
func TestServeSoundWithRanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cache int64
	}{{"cached", 0}, {"streamed", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, _, _ := imageApp(t, tc.cache)
			files := make([]string, len(soundFixtures))
			for i, f := range soundFixtures {
				files[i] = f.file
			}
			sums := addSounds(t, a, "play", files...)
			c := a.client()
			// A sound of more than one chunk of the database reader
			// (store.ImageChunkBytes): streamed, as the type its probe
			// found when it was stored.
			long := silentWAV(20, 16000)
			im, err := media.Sound("long.wav", []byte(long), "audio/wav")
			if err != nil {
				t.Fatal(err)
			}
			st := a.study("long", 0, 3, study.StatusDraft)
			if _, rej, err := a.store.AddItems(t.Context(), st.ID, []media.Image{im}); err != nil || len(rej) > 0 {
				t.Fatal(rej, err)
			}
			if res := a.do(c, "GET", "/img/"+im.SHA256, nil, nil); res.StatusCode != 200 || res.body != long || res.Header.Get("Content-Type") != "audio/wav" {
				t.Errorf("a sound of %d bytes: %d %q, %d bytes", len(long), res.StatusCode, res.Header.Get("Content-Type"), len(res.body))
			}
			for i, f := range soundFixtures {
				data := soundFixture(t, f.file)
				res := a.do(c, "GET", "/img/"+sums[i], nil, nil)
				if res.StatusCode != 200 || res.body != data || res.Header.Get("Content-Type") != f.mime ||
					res.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Fatalf("%s: %d %q %q, %d bytes of %d", f.file, res.StatusCode, res.Header.Get("Content-Type"),
						res.Header.Get("X-Content-Type-Options"), len(res.body), len(data))
				}
				if !strings.Contains(res.Header.Get("Content-Security-Policy"), "media-src 'self'") {
					t.Errorf("policy %q", res.Header.Get("Content-Security-Policy"))
				}
				res = a.do(c, "GET", "/img/"+sums[i], nil, map[string]string{"Range": "bytes=100-199"})
				if tc.cache < 0 {
					if res.StatusCode != 200 || res.body != data {
						t.Errorf("%s streamed with a Range: %d, %d bytes", f.file, res.StatusCode, len(res.body))
					}
					continue
				}
				want := fmt.Sprintf("bytes 100-199/%d", len(data))
				if res.StatusCode != http.StatusPartialContent || res.body != data[100:200] || res.Header.Get("Content-Range") != want ||
					res.Header.Get("Content-Type") != f.mime {
					t.Errorf("%s Range: %d %q %q, %d bytes", f.file, res.StatusCode, res.Header.Get("Content-Range"), res.Header.Get("Content-Type"), len(res.body))
				}
				res = a.do(c, "GET", "/img/"+sums[i], nil, map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(data)+10)})
				if res.StatusCode != http.StatusRequestedRangeNotSatisfiable {
					t.Errorf("%s past its end: %d", f.file, res.StatusCode)
				}
			}
		})
	}
}

// soundStudy creates an open study of the format whose items are the
// sound fixtures, the first named label (escaped on the pages).
func (a *app) soundStudy(slug, format, label string) {
	a.t.Helper()
	a.soundStudyWith(study.StudyInput{Slug: slug, Title: "Study " + slug, QuestionsPerParticipant: 3,
		Status: study.StatusOpen, Format: format}, label)
}

// soundStudyWith is soundStudy with the study's settings in.
func (a *app) soundStudyWith(in study.StudyInput, label string) {
	a.t.Helper()
	st, err := a.store.CreateStudy(a.t.Context(), in)
	if err != nil {
		a.t.Fatal(err)
	}
	var ims []media.Image
	for i, f := range soundFixtures {
		data := soundFixture(a.t, f.file)
		name := f.file
		if i == 0 {
			name = label + ".wav"
		}
		im, err := media.Sound(name, []byte(data), f.mime)
		if err != nil {
			a.t.Fatal(err)
		}
		ims = append(ims, im)
	}
	if _, rej, err := a.store.AddItems(a.t.Context(), st.ID, ims); err != nil || len(rej) > 0 {
		a.t.Fatal(rej, err)
	}
}

// The question page of a study of sounds (issue 29), in each format: every
// item shown is a play button whose data-src is the item's /img/ URL with
// a preloaded audio element beside it, nothing plays by itself, the keys
// are A (the anchor) and S, D, F... (the options), and labels are escaped.
func TestSoundQuestionPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	label := `<b>x & "y"` // no slash: a file name's folders end at one
	play := regexp.MustCompile(`<button type="button" class="play" data-src="(/img/[0-9a-f]{64})" data-play-key="([a-z])" aria-label="[^"]*" hidden><span aria-hidden="true">▶</span> ([^<]*) <span class="key">([A-Z])</span></button>\s*<audio preload="auto" src="(/img/[0-9a-f]{64})" controls`)
	for _, f := range []struct {
		format string
		keys   string
		prompt string // the question, in the words of sounds
	}{{"triplet", "asd", "Which is more similar to the first sound?"}, {"odd-one-out", "sdf", "Which one does not belong?"},
		{"rank:4:2", "asdfg", "Choose the 2 sounds most like the first one, in order"}} {
		slug := "s-" + strings.ReplaceAll(f.format, ":", "-")
		a.soundStudy(slug, f.format, label)
		c := a.client()
		if res := a.do(c, "POST", "/s/"+slug+"/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: start %d", f.format, res.StatusCode)
		}
		page := a.do(c, "GET", "/s/"+slug+"/q", nil, nil)
		if page.StatusCode != http.StatusOK {
			t.Fatalf("%s: question page %d", f.format, page.StatusCode)
		}
		buttons := play.FindAllStringSubmatch(page.body, -1)
		keys := ""
		for _, b := range buttons {
			keys += b[2]
			if b[1] != b[5] || strings.ToLower(b[4]) != b[2] {
				t.Errorf("%s: a play button %q", f.format, b[0])
			}
			if res := a.do(c, "GET", b[1], nil, nil); res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "audio/") {
				t.Errorf("%s: %s is %d %q", f.format, b[1], res.StatusCode, res.Header.Get("Content-Type"))
			}
		}
		if keys != f.keys {
			t.Errorf("%s: play keys %q, want %q:\n%s", f.format, keys, f.keys, page.body)
		}
		if !strings.Contains(page.body, f.prompt) || strings.Contains(page.body, "similar to the top image") || strings.Contains(page.body, "images most like") {
			t.Errorf("%s: the page does not ask %q, or asks of images:\n%s", f.format, f.prompt, page.body)
		}
		if f.format != "odd-one-out" && !strings.Contains(page.body, `data-too-soon="Please listen a moment longer`) {
			t.Errorf("%s: the minimum viewing time's message is not a sound's", f.format)
		}
		if strings.Contains(page.body, "autoplay") || strings.Contains(page.body, "<b>x") {
			t.Errorf("%s: the page plays by itself or holds a label as markup", f.format)
		}
		if strings.Contains(page.body, "<img src=\"/img/") || strings.Contains(page.body, `rel="prefetch"`) {
			t.Errorf("%s: a sound shown or fetched ahead as an image", f.format)
		}
		// Every option shows its label (escaped) inside its answer button.
		if n := strings.Count(page.body, `<span class="item-sound" dir="auto">`); n != len(f.keys) {
			t.Errorf("%s: %d sound labels, want %d", f.format, n, len(f.keys))
		}
	}
	// The label, escaped, is on some page: the first item is in every
	// triplet of 7 items with probability 3/7, so check the study page.
	admin := a.admin()
	if body := a.do(admin, "GET", "/admin/studies/s-triplet", nil, nil).body; !strings.Contains(body, "&lt;b&gt;x &amp; &#34;y&#34;") {
		t.Error("the study page does not show the label escaped")
	}
}

// The setting "every sound played to its end" (issue 29) is saved by the
// study form, shown checked when editing, and marks the question form
// (data-play-to-end) for app.js; a study without it has no such mark.
func TestPlayToEndSetting(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.admin()
	for _, on := range []bool{true, false} {
		slug := fmt.Sprintf("end-%v", on)
		form := url.Values{"slug": {slug}, "title": {slug}, "status": {"open"}, "design": {"random"}, "questions_per_participant": {"3"}}
		if on {
			form.Set("play_to_end", "on")
		}
		if res := a.do(c, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("create %s: %d %s", slug, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
		st, err := a.store.StudyBySlug(t.Context(), slug)
		if err != nil || st.PlayToEnd != on {
			t.Fatalf("%s stored PlayToEnd %v, %v", slug, st.PlayToEnd, err)
		}
		edit := a.do(c, "GET", "/admin/studies/"+slug+"/edit", nil, nil).body
		if got := strings.Contains(edit, `name="play_to_end" id="play_to_end" checked`); got != on {
			t.Errorf("%s: the edit form shows the box checked: %v", slug, got)
		}
		a.soundStudyWith(study.StudyInput{Slug: slug + "-q", Title: "q", QuestionsPerParticipant: 3, Status: study.StatusOpen, PlayToEnd: on}, "x")
		p := a.client()
		if res := a.do(p, "POST", "/s/"+slug+"-q/start", url.Values{}, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("start: %d", res.StatusCode)
		}
		page := a.do(p, "GET", "/s/"+slug+"-q/q", nil, nil).body
		if got := strings.Contains(page, " data-play-to-end "); got != on {
			t.Errorf("%s: the question form is marked play-to-end: %v", slug, got)
		}
	}
}

// A study's longest sound (issue 29): the study form saves it (1 to 600,
// default 30) and refuses it out of bounds; an upload, as a file or in a
// zip, to a study whose limit is 1 s refuses the 5 s tone.mp3 with the
// limit named and stores nothing, while a study with the default takes it.
func TestSoundLimitSetting(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.admin()
	create := func(slug, secs string) response {
		form := url.Values{"slug": {slug}, "title": {slug}, "status": {"draft"}, "design": {"random"}, "questions_per_participant": {"3"}}
		if secs != "" {
			form.Set("sound_max_seconds", secs)
		}
		return a.do(c, "POST", "/admin/studies", form, nil)
	}
	for _, bad := range []string{"0", "601", "-1", "ten"} {
		if res := create("bad", bad); res.StatusCode == http.StatusSeeOther || !strings.Contains(res.body, "the longest sound must be between 1 and 600 seconds") {
			t.Errorf("limit %q: %d %s", bad, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
	}
	for slug, secs := range map[string]string{"short": "1", "plain": ""} {
		if res := create(slug, secs); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("create %s: %d %s", slug, res.StatusCode, noticeRE.FindAllString(res.body, -1))
		}
	}
	short, err := a.store.StudyBySlug(t.Context(), "short")
	if err != nil || short.SoundMaxSeconds != 1 {
		t.Fatalf("short stored limit %d, %v", short.SoundMaxSeconds, err)
	}
	plain, err := a.store.StudyBySlug(t.Context(), "plain")
	if err != nil || plain.SoundMaxSeconds != study.DefaultSoundMaxSeconds {
		t.Fatalf("plain stored limit %d, %v", plain.SoundMaxSeconds, err)
	}
	if edit := a.do(c, "GET", "/admin/studies/short/edit", nil, nil).body; !strings.Contains(edit, `name="sound_max_seconds" id="sound_max_seconds" min="1" max="600" value="1"`) {
		t.Error("the edit form does not show the limit of 1 s")
	}
	mp3 := soundFixture(t, "tone.mp3")
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	flac := soundFixture(t, "tone.flac") // 5 s too, and not a duplicate of tone.mp3
	w, _ := zw.Create("in/zipped.flac")
	w.Write([]byte(flac))
	zw.Close()
	// A name that says no kind (the content decides) is held to the
	// study's limit too.
	res := upload(t, a, c, "short", [][2]string{{"tone.mp3", mp3}, {"sounds.zip", zbuf.String()}, {"recording.bin", mp3}})
	for _, want := range []string{
		"<strong>tone.mp3</strong>: lasts 5 s, the study&#39;s limit is 1 s",
		"<strong>in/zipped.flac</strong>: lasts 5 s, the study&#39;s limit is 1 s",
		"<strong>recording.bin</strong>: lasts 5 s, the study&#39;s limit is 1 s",
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("report lacks %q:\n%s", want, noticeRE.FindAllString(res.body, -1))
		}
	}
	if got := a.storedItems(short.ID); got != "" {
		t.Errorf("stored over the limit:\n%s", got)
	}
	res = upload(t, a, c, "plain", [][2]string{{"tone.mp3", mp3}, {"sounds.zip", zbuf.String()}})
	if !strings.Contains(res.body, "2 added") {
		t.Errorf("the default limit: %d %s", res.StatusCode, noticeRE.FindAllString(res.body, -1))
	}
	if got, want := a.storedItems(plain.ID), fmt.Sprintf("in/zipped.flac audio audio/flac %d\ntone.mp3 audio audio/mpeg %d\n", len(flac), len(mp3)); got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
}
