"""The Python rows of the client table: GET each URL, print its status code
(one line per URL).

    python3 get.py requests|urllib URL...

Both read the proxy from the environment (http_proxy/https_proxy, upper or
lower case). robotsgate's CA: requests reads REQUESTS_CA_BUNDLE; urllib's
default SSL context reads SSL_CERT_FILE (OpenSSL's default verify paths).
"""

import sys


def with_requests(url):
    import requests

    return requests.get(url, timeout=60).status_code


def with_urllib(url):
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            resp.read()
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def main():
    libs = {"requests": with_requests, "urllib": with_urllib}
    if len(sys.argv) < 3 or sys.argv[1] not in libs:
        sys.exit("usage: get.py requests|urllib URL...")
    for url in sys.argv[2:]:
        print(libs[sys.argv[1]](url), flush=True)


if __name__ == "__main__":
    main()
