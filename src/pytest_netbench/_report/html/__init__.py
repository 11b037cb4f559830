"""The single-file HTML report (``--netbench-html PATH``, ``netbench ... --html PATH``).

:func:`write_html_report` takes a session's records as the other writers do;
:func:`write_results_html` takes the results of a command.
"""

from pytest_netbench._report.html.document import render_html_report, write_html_report
from pytest_netbench._report.html.results import write_results_html

__all__ = ["render_html_report", "write_html_report", "write_results_html"]
