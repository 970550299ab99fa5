"""Each recipe page quotes its script whole, so that the code on the page is the code the recipe tests run."""

from __future__ import annotations

import re

import pytest
from recipe_helpers import RECIPES

PAGES = sorted(p.stem for p in RECIPES.glob("*.md") if (RECIPES / f"{p.stem}_recipe.py").is_file())


def test_every_recipe_script_has_its_page() -> None:
    scripts = sorted(p.name.removesuffix("_recipe.py") for p in RECIPES.glob("*_recipe.py"))
    assert scripts == PAGES, f"scripts {scripts} but pages {PAGES}"


@pytest.mark.parametrize("name", PAGES)
def test_the_page_quotes_its_script_verbatim(name: str) -> None:
    page = (RECIPES / f"{name}.md").read_text(encoding="utf-8")
    script = (RECIPES / f"{name}_recipe.py").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", page, flags=re.S | re.M)
    assert script in blocks, (
        f"docs/recipes/{name}.md does not quote docs/recipes/{name}_recipe.py as it is; paste the script into the "
        "page's ```python block again"
    )


@pytest.mark.parametrize("name", PAGES)
def test_the_page_names_the_command_it_measured(name: str) -> None:
    page = (RECIPES / f"{name}.md").read_text(encoding="utf-8")
    assert f"python docs/recipes/{name}_recipe.py --steps" in page
    assert "--deals 500" in page, "the page's figure is for 500 duplicate deals"
