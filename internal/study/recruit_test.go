package study

import "testing"

// The texts to paste into each platform, whole (Prolific's URL parameters
// as Prolific documents them; MTurk's ExternalQuestion schema with the URL
// XML-escaped).
func TestRecruitLinks(t *testing.T) {
	t.Parallel()
	const u = "https://closer.example.org/s/faces"
	for _, c := range []struct {
		p    Platform
		want []RecruitLink
	}{
		{Platform{Kind: PlatformProlific, CompletionCode: "C1A2B3"}, []RecruitLink{
			{ID: "prolific-url", Name: "Study URL", Where: "Prolific → your study → Study link (\"I'll use URL parameters\")",
				Text: u + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"},
			{ID: "prolific-code", Name: "Completion code", Where: "Prolific → your study → Completion paths (closer sends participants to https://app.prolific.com/submissions/complete?cc=C1A2B3)",
				Text: "C1A2B3"}}},
		{Platform{Kind: PlatformGeneric, IDParam: "pid"}, []RecruitLink{
			{ID: "generic-url", Name: "Study link", Where: "your platform: replace PARTICIPANT_ID by each participant's id", Text: u + "?pid=PARTICIPANT_ID"}}},
		{Platform{}, []RecruitLink{
			{ID: "public-url", Name: "Study link", Where: "anyone with it can take part (e-mail, a course page, the QR code below)", Text: u}}},
	} {
		got := c.p.RecruitLinks(u)
		if len(got) != len(c.want) {
			t.Fatalf("%s: %+v", c.p.Kind, got)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s link %d:\n got %+v\nwant %+v", c.p.Kind, i, got[i], c.want[i])
			}
		}
	}
	mt := Platform{Kind: PlatformMTurk}.RecruitLinks(u + "?lab=a&b=1")
	want := `<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">
  <ExternalURL>https://closer.example.org/s/faces?lab=a&amp;b=1</ExternalURL>
  <FrameHeight>900</FrameHeight>
</ExternalQuestion>`
	if len(mt) != 1 || mt[0].Text != want || !mt[0].Multiline {
		t.Errorf("MTurk: %+v", mt)
	}
}
