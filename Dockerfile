# The container path: docker compose up (see docker-compose.yml).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/web ./cmd/web && \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/closer ./cmd/closer

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/web /out/closer /usr/local/bin/
ENV ADDR=:8080
EXPOSE 8080
USER nonroot
ENTRYPOINT ["/usr/local/bin/web"]
