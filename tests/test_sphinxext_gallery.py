"""sphinxext.gallery: every tutorial's page rendered from its one run, and sphinx-gallery kept from executing."""

import pytest
from sphinx.errors import ExtensionError

from tutorials_site.sphinxext.gallery import refuse_own_execution


def test_refuse_own_execution_names_what_sphinx_gallery_ran(fake_app):
    app = fake_app()
    app.config.sphinx_gallery_conf = {"passing_examples": ["/x/a.py"], "failing_examples": {}}
    with pytest.raises(ExtensionError, match=r"a\.py"):
        refuse_own_execution(app)
    app.config.sphinx_gallery_conf = {"passing_examples": [], "failing_examples": {}}
    refuse_own_execution(app)
