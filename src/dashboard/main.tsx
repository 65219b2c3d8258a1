// The dashboard's entry (bundled by bin/build.js into dist/dashboard/assets/app-<hash>.js and .css).
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app.tsx';

render(<App />, document.getElementById('app') as HTMLElement);
