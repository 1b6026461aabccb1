package web

import (
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// The dashboard shows a text item (issue 29) by its text: its item view
// has the text and no image URL, the scatter labels its point with the
// text (cut as labels are), and a study of texts is not taken for one of
// label-only items.
func TestDashboardShowsTexts(t *testing.T) {
	t.Parallel()
	items := []study.Item{
		{Index: 0, Kind: study.ItemText, Label: "fr", Text: "fraise", SHA256: "a"},
		{Index: 1, Kind: study.ItemImage, Label: "disk", ContentType: "image/png", SHA256: "b"},
		{Index: 2, Kind: study.ItemImage, Label: "imported", SHA256: "label-2"},
	}
	views := itemViews(items)
	if views[0].Text != "fraise" || views[0].URL != "" || views[0].Shown() != "fraise" {
		t.Errorf("a text item's view: %+v", views[0])
	}
	if views[1].URL != "/img/b" || views[1].Text != "" || views[2].URL != "" || views[2].Shown() != "imported" {
		t.Errorf("image and label-only views: %+v %+v", views[1], views[2])
	}
	pts := scatterItems([][]float64{{0, 1}, {1, 0}, {2, 2}}, views, nil, true)
	if pts[0].Label != "fraise (#0)" || pts[0].Image != "" || pts[1].Image != "/img/b" || pts[2].Label != "imported (#2)" {
		t.Errorf("scatter points: %+v", pts)
	}
}

// The dashboard shows a sound item (issue 29) by its label, a link that
// plays it: no thumbnail (an <img> of a sound is a broken picture) and no
// image on the scatter, which labels its point; a study of sounds is not
// taken for one of label-only items.
func TestDashboardShowsSounds(t *testing.T) {
	t.Parallel()
	items := []study.Item{
		{Index: 0, Kind: study.ItemAudio, Label: "rain", ContentType: "audio/mpeg", SHA256: "s"},
		{Index: 1, Kind: study.ItemAudio, Label: "wind", ContentType: "audio/wav", SHA256: "t"},
	}
	views := itemViews(items)
	if views[0].Sound != "/img/s" || views[0].URL != "" || views[0].Shown() != "rain" {
		t.Errorf("a sound's view: %+v", views[0])
	}
	pts := scatterItems([][]float64{{0, 1}, {1, 0}}, views, nil, true)
	if pts[0].Image != "" || pts[0].Label != "rain (#0)" {
		t.Errorf("scatter points: %+v", pts)
	}
}

// The dashboard shows a video item (issue 29) as a sound: by its label, a
// link to the video, with no thumbnail and no image on the scatter.
func TestDashboardShowsVideos(t *testing.T) {
	t.Parallel()
	items := []study.Item{
		{Index: 0, Kind: study.ItemVideo, Label: "wave", ContentType: "video/mp4", SHA256: "v", Width: 64, Height: 48},
		{Index: 1, Kind: study.ItemVideo, Label: "walk", ContentType: "video/webm", SHA256: "w", Width: 64, Height: 48},
	}
	views := itemViews(items)
	if views[0].Video != "/img/v" || views[0].URL != "" || views[0].Sound != "" || views[0].Shown() != "wave" {
		t.Errorf("a video's view: %+v", views[0])
	}
	pts := scatterItems([][]float64{{0, 1}, {1, 0}}, views, nil, true)
	if pts[0].Image != "" || pts[0].Label != "wave (#0)" {
		t.Errorf("scatter points: %+v", pts)
	}
}
