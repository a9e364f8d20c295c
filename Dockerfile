# syntax=docker/dockerfile:1
# One image for every sub-command: the operator (manager), the load generator
# (coordinator, worker) and the result tools.

FROM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=unknown
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
# internal/admission embeds the CRDs (config/crd).
COPY config/ config/
COPY controllers/ controllers/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -ldflags "-s -w -X github.com/streambench/streambench-operator/internal/version.version=$VERSION -X github.com/streambench/streambench-operator/internal/version.commit=$COMMIT" -trimpath -o /out/streambench ./cmd/streambench

# A static binary needs no libc: distroless static, running as non-root.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=unknown
ARG COMMIT=unknown
LABEL org.opencontainers.image.version=$VERSION org.opencontainers.image.revision=$COMMIT
COPY --from=build /out/streambench /streambench
USER 65532:65532
ENTRYPOINT ["/streambench"]
