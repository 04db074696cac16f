# edgepipe on CPU: `docker build -t edgepipe . && docker run --rm edgepipe` builds the bundled reference model.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /opt/edgepipe
COPY . .
RUN pip install -e .
ENTRYPOINT ["edgepipe"]
CMD ["build"]
