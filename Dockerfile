# kubesched: `docker build -t kubesched:0.1.0 .`, then `kubectl apply -f deploy/`.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY src ./src
RUN pip install --no-cache-dir . && rm -rf /src
WORKDIR /
USER 65532:65532
ENTRYPOINT ["kubesched"]
CMD ["run"]
